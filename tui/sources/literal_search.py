"""The lines of a big local log that hold any of a set of fixed strings, at memory speed.

A backfill must pick the few metric, progress and failure lines out of
gigabytes of reward-function chatter. GNU grep does that with one string at
memory speed, but its many-string search (the scanner has dozens of needles:
step lines, bars, every trainer's grammar, every way a run can fail) costs
several times as much on natural-language text. Hyperscan (Intel's SIMD
matcher, through the ``hyperscan`` bindings) matches all of them at a few GB/s
and releases the GIL while it scans, so the log is read in line-aligned chunks
and scanned by one thread per CPU. Where the bindings are not installed (they
ship for x86-64 Linux), the grep pieces of :mod:`tui.sources.grep_filter` do the
same job more slowly.

The file is read, not mapped: a log truncated by a rotation while it is being
scanned must give a short read, not a SIGBUS that kills the process. Each
slice reads into one buffer it keeps and scans it in place: a fresh bytes
object per chunk (``os.pread``) and its copy cut at the last newline cost
about a tenth more CPU (a process scanning 1 GiB of seed 001's chatter on two
threads: 0.57–0.62 CPU-seconds that way, 0.51–0.53 this way).
"""

from __future__ import annotations

import os
import re
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

from tui.parsers.log_scanner import HOLE, after_hole

# Each slice reads this much at a time into the one buffer it reuses, cut back to its
# last newline: a needle never spans a newline, so every match lies inside one chunk,
# whole lines with it. From 256 KiB to 4 MiB the scan's CPU cost is the same (1 GiB of
# seed 001's chatter: 0.47–0.48 CPU-seconds on two threads); 128 KiB costs more.
CHUNK_BYTES = 512 * 1024
# The range is cut into this many slices per thread, handed on in file order as each is
# scanned: the caller parses the first slices' lines while the threads scan the rest
# (and a dashboard shows its first steps after a slice, not after the whole file).
SLICES_PER_WORKER = 4
# A slice covers at most this much of the file. Its matching lines are held from its
# scan until the caller takes them, and in a log that is all step lines (a run of a
# million steps: 1 GB) every line matches: the lines held stay a few slices' worth.
SLICE_BYTES = 8 * 1024 * 1024
# A line is read whole up to this length; a longer one is junk (the scanner skips
# lines over 16 MiB) and is passed over.
LONGEST_LINE = 32 * 1024 * 1024


def available() -> bool:
    """Whether the Hyperscan bindings can be used here."""
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


class LiteralSearch:
    """A compiled set of fixed strings, ready to pick matching lines out of files."""

    def __init__(self, needles: Sequence[bytes]) -> None:
        import hyperscan

        self._hs: Any = hyperscan
        self._database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        # Literal patterns: each needle's bytes with every special character escaped
        # (latin-1 maps bytes to code points one to one, UTF-8 needles included).
        patterns = [re.escape(needle.decode("latin-1")).encode("latin-1") for needle in needles]
        self._database.compile(expressions=patterns, ids=list(range(len(patterns))),
                               elements=len(patterns), flags=[0] * len(patterns))

    def lines(self, path: str | os.PathLike[str], end: int,
              workers: int | None = None, chunk_bytes: int = CHUNK_BYTES) -> list[tuple[int, bytes]]:
        """(offset, line) of every line in ``[0, end)`` of ``path`` that holds a needle,
        in file order; ``end`` must be a line start (the end of the last whole line)."""
        count = threads(workers)
        with ThreadPoolExecutor(count) as pool:
            return [line for part in self.slices(path, end, pool, count, chunk_bytes)
                    for line in part.result()]

    def slices(self, path: str | os.PathLike[str], end: int, pool: Executor, workers: int,
               chunk_bytes: int = CHUNK_BYTES) -> Slices:
        """``lines``, as one future per slice of ``[0, end)`` in file order, scanned on ``pool``
        (``workers`` threads: ``SLICES_PER_WORKER`` slices each, more where a slice would
        exceed ``SLICE_BYTES``), at most ``workers`` of them ahead of the one taken last.

        The file is opened once, here: every slice reads the file that was there
        now, even if a rotation puts another under the name meanwhile. It is
        closed when the last slice is done, or those started are once the caller
        closes the slices early.
        """
        if end <= 0:
            return Slices([], workers, lambda _start, _stop: pool.submit(list))  # never called
        count = max(max(1, workers) * SLICES_PER_WORKER, -(-end // SLICE_BYTES))
        descriptor = os.open(path, os.O_RDONLY)
        try:
            cuts = sorted({0, end, *(_line_start_after(descriptor, end * i // count, end)
                                     for i in range(1, count))})
            return Slices(list(zip(cuts, cuts[1:])), workers,
                          lambda start, stop: pool.submit(self._scan, descriptor, start, stop, chunk_bytes),
                          lambda: os.close(descriptor))
        except BaseException:
            os.close(descriptor)
            raise

    def _scan(self, descriptor: int, start: int, stop: int, chunk_bytes: int) -> list[tuple[int, bytes]]:
        """The matching lines of ``[start, stop)`` (both line starts), read into one buffer the
        slice reuses (no allocation or copy per chunk: the matcher scans the buffer where it
        lies), with one scratch a slice."""
        scratch = self._hs.Scratch(self._database)
        out: list[tuple[int, bytes]] = []
        buffer = bytearray(chunk_bytes)
        at, size = start, chunk_bytes
        while at < stop:
            if len(buffer) < size:
                buffer = bytearray(size)
            view = memoryview(buffer)
            got = os.preadv(descriptor, [view[:min(size, stop - at)]], at)
            if not got:
                break  # the file shrank under us: what is left is gone
            cut = buffer.rfind(b"\n", 0, got) + 1 if at + got < stop else got
            if cut == 0:
                hole = buffer.rfind(HOLE, 0, got) + 1
                if hole:  # NULs end a line (a hole: see HOLE): what follows them is the next
                    at, size = at + hole, chunk_bytes
                    continue
                if size < LONGEST_LINE:
                    size *= 2  # a line longer than a chunk: read it whole
                    continue
                # Longer still: no line anyone printed (the scanner skips those too).
                at, size = _line_start_after(descriptor, at + got, stop), chunk_bytes
                continue
            ends: list[int] = []
            # The bindings scan any buffer (their stub says bytes or str).
            self._database.scan(view[:cut], match_event_handler=lambda _id, _from, to, _flags, _ctx:  # type: ignore[type-var]
                                ends.append(to), scratch=scratch)
            out += [(at + begin, line) for begin, line in _whole_lines(buffer, cut, sorted(ends))]
            at, size = at + cut, chunk_bytes
        return out


Scan = Callable[[int, int], "Future[list[tuple[int, bytes]]]"]


class Slices:
    """The futures of a file's slices in file order, each slice submitted only when it is at
    most ``ahead`` slices past the one the caller took last: scanning at memory speed, the
    threads would otherwise hold every line of the file before the caller parsed a few.
    ``on_done`` runs once every slice submitted is done and no more will be (all were
    taken, or ``close`` was called)."""

    def __init__(self, ranges: list[tuple[int, int]], ahead: int, scan: Scan,
                 on_done: Callable[[], None] | None = None) -> None:
        self._ranges = iter(ranges)
        self._scan = scan
        self._waiting: deque[Future[list[tuple[int, bytes]]]] = deque()
        self._running = 0
        self._closed = False
        self._on_done = on_done
        self._lock = threading.Lock()
        for _ in range(max(1, ahead) + 1):
            self._submit_next()
        if not self._waiting:
            self.close()

    def __iter__(self) -> Slices:
        return self

    def __next__(self) -> Future[list[tuple[int, bytes]]]:
        if not self._waiting:
            self.close()
            raise StopIteration
        self._submit_next()
        return self._waiting.popleft()

    def close(self) -> None:
        """Submit no more slices; ``on_done`` runs once those submitted are done."""
        with self._lock:
            self._closed = True
        self._finish_if_idle()

    def _submit_next(self) -> None:
        if self._closed:
            return
        span = next(self._ranges, None)
        if span is None:
            return
        with self._lock:
            self._running += 1
        future = self._scan(*span)
        future.add_done_callback(self._slice_done)
        self._waiting.append(future)

    def _slice_done(self, _: Future[list[tuple[int, bytes]]]) -> None:
        with self._lock:
            self._running -= 1
        self._finish_if_idle()

    def _finish_if_idle(self) -> None:
        with self._lock:
            if not self._closed or self._running:
                return
            on_done, self._on_done = self._on_done, None
        if on_done is not None:
            on_done()


def threads(workers: int | None = None) -> int:
    """How many threads scan: ``workers``, or one per CPU (at most 16)."""
    return max(1, min(workers or os.cpu_count() or 1, 16))


def _line_start_after(descriptor: int, near: int, limit: int) -> int:
    """The first line start at or after ``near`` (``limit`` if none before it)."""
    at = near
    while at < limit:
        if at == 0:
            return 0
        data = os.pread(descriptor, min(1 << 20, limit - at + 1), at - 1)
        newline = data.find(b"\n")
        if newline != -1:
            return min(limit, at + newline)
        if not data:
            break
        at += len(data) - 1
    return limit


def _whole_lines(chunk: bytearray, length: int, ends: list[int]) -> list[tuple[int, bytes]]:
    """The lines (with their newline) of ``chunk[:length]`` that hold the match ends, each once."""
    out: list[tuple[int, bytes]] = []
    line_end = -1
    for match_end in ends:
        if match_end <= line_end:
            continue  # another needle on a line already taken
        start = after_hole(chunk, chunk.rfind(b"\n", 0, match_end - 1) + 1, match_end - 1)
        newline = chunk.find(b"\n", match_end - 1, length)
        line_end = length if newline == -1 else newline + 1
        out.append((start, bytes(chunk[start:line_end])))
    return out
