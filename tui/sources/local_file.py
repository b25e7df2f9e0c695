"""A log file on this machine, read in large chunks and followed as it grows.

Following polls ``os.stat`` a few times a second once the end is reached:
one cheap syscall per tick, no busy loop, and it works the same on every
filesystem (inotify does not see writes over NFS, where runs often live).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from pathlib import Path

from tui.regular_file import open_regular
from tui.sources import literal_search
from tui.sources.accelerators.hosts import AcceleratorHost, this_host
from tui.sources import follow_identity
from tui.sources.base import CaughtUp, Data, Lines, Reset, SourceError, SourceEvent
from tui.sources.follow_identity import LocalIdentity
from tui.sources.grep_filter import (
    DD_CAN_CUT,
    PieceQueue,
    drain,
    grep_command,
    grep_piece,
    in_order,
    piece_queue,
    piece,
    piece_starts,
)
from tui.sources.run_files import LoggerFiles

CHUNK_BYTES = 4 * 1024 * 1024
POLL_SECONDS = 0.2
# Below this size reading everything is as fast as starting grep.
GREP_MIN_BYTES = 32 * 1024 * 1024
# Pre-filtered lines are handed on in batches of about this many bytes (grep's) or lines.
_LINES_BATCH_BYTES = 1024 * 1024
_LINES_BATCH_LINES = 2048
# Grep pieces of a big log smaller than this are not worth a process of their own.
PIECE_MIN_BYTES = 64 * 1024 * 1024
# How far past a rough cut the next line start is looked for.
_MAX_CUT_SEARCH = 1024 * 1024


@functools.cache
def _dd_can_cut() -> bool:
    """Whether this machine's dd can cut a file at byte offsets (asked once)."""
    try:
        return subprocess.run(["sh", "-c", DD_CAN_CUT], timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _last_line_end(handle, size: int, window: int = 1 << 20) -> int:
    """Offset just after the last newline at or before ``size`` (0 if none)."""
    end = size
    while end > 0:
        begin = max(0, end - window)
        handle.seek(begin)
        newline = handle.read(end - begin).rfind(b"\n")
        if newline != -1:
            return begin + newline + 1
        end = begin
    return 0


class LocalFile:
    """A local log file."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        poll_seconds: float = POLL_SECONDS,
        prefilter: Sequence[bytes] = (),
        grep_min_bytes: int = GREP_MIN_BYTES,
        piece_min_bytes: int = PIECE_MIN_BYTES,
        matcher: str = "auto",
    ) -> None:
        """``prefilter``: fixed strings every wanted line contains; a big log is
        then backfilled through a literal search (``Lines``) instead of read whole:
        ``matcher`` ``"hyperscan"`` (read in chunks and scanned here), ``"grep"`` (grep pieces), or
        ``"auto"``, Hyperscan where its bindings are installed."""
        self.path = Path(path)
        self.logger_files: LoggerFiles | None = None  # a console log is the run itself
        self.poll_seconds = poll_seconds
        self.prefilter = tuple(prefilter)
        self.grep_min_bytes = grep_min_bytes
        # The smallest piece worth a grep of its own; a test makes it small to see the cuts.
        self.piece_min_bytes = piece_min_bytes
        self.matcher = matcher if matcher != "auto" else (
            "hyperscan" if literal_search.available() else "grep")

    @property
    def label(self) -> str:
        return str(self.path)

    @property
    def file_path(self) -> str:
        return str(self.path)

    async def connect(self) -> str | None:
        """Fail early, with the reason, if the file cannot be read."""
        self._open().close()
        return None

    def _open(self):
        try:
            return open_regular(self.path)  # a FIFO or a device would hang the read
        except FileNotFoundError:
            raise SourceError(f"{self.path}: no such file") from None
        except IsADirectoryError:
            raise SourceError(f"{self.path}: is a directory, not a log file") from None
        except PermissionError:
            raise SourceError(f"{self.path}: permission denied") from None
        except OSError as error:
            raise SourceError(f"{self.path}: {error.strerror or error}") from None

    async def stream(self, start: int, follow: bool) -> AsyncIterator[SourceEvent]:
        """Yield chunks from ``start``; when following, notice truncation and replacement
        (``follow_identity``: a rewrite past the offset read so far too)."""
        handle = self._open()
        try:
            stat = os.fstat(handle.fileno())
            identity = LocalIdentity.of(handle.fileno(), start)
            offset = start
            if self._should_prefilter(start, stat.st_size):
                backfill = (self._literal_backfill if self.matcher == "hyperscan"
                            else self._grep_backfill)
                # Closed here when the reader stops early, not whenever the collector finds it:
                # its greps are ended then, not at the event loop's end.
                async with contextlib.aclosing(backfill(handle, stat.st_size, stat.st_mtime)) as events:
                    async for event in events:
                        yield event
                        offset = event.resume_at
            handle.seek(offset)
            caught_up = False
            while True:
                data = await asyncio.to_thread(handle.read, CHUNK_BYTES)
                if data:
                    caught_up = False
                    yield Data(offset, data, os.fstat(handle.fileno()).st_mtime)
                    offset += len(data)
                    identity = identity.read(data, offset)
                    continue
                if not follow:
                    return
                if not caught_up:
                    caught_up = True
                    yield CaughtUp()
                await asyncio.sleep(self.poll_seconds)
                change, identity = identity.change(self.path, handle.fileno(), offset)
                if change is None:
                    continue
                yield Reset(follow_identity.replaced(str(self.path)) if change == "replaced"
                            else follow_identity.truncated(str(self.path)))
                handle.close()
                handle = await self._reopen()
                identity = LocalIdentity.of(handle.fileno(), 0)
                offset = 0
        finally:
            handle.close()

    def _should_prefilter(self, start: int, size: int) -> bool:
        return (start == 0 and bool(self.prefilter) and size >= self.grep_min_bytes
                and (self.matcher == "hyperscan" or shutil.which("grep") is not None))

    async def _literal_backfill(self, handle, size: int, mtime: float) -> AsyncGenerator[Lines, None]:
        """The lines of ``[0, resume_at)`` that hold a needle, found by Hyperscan at
        memory speed (:mod:`tui.sources.literal_search`), slice after slice as the
        threads finish them: the caller parses the first while the rest are scanned.
        See ``_grep_backfill``."""
        from concurrent.futures import ThreadPoolExecutor

        resume_at = _last_line_end(handle, size)
        search = literal_search.LiteralSearch(self.prefilter)
        workers = literal_search.threads()
        pool = ThreadPoolExecutor(workers)
        said = False
        slices = search.slices(self.path, resume_at, pool, workers)
        try:
            for part in slices:
                lines = await asyncio.wrap_future(part)
                for at in range(0, len(lines), _LINES_BATCH_LINES):
                    said = True
                    yield Lines(lines[at:at + _LINES_BATCH_LINES], resume_at, mtime)
        finally:  # a reader that stops early leaves no slice to scan
            slices.close()
            pool.shutdown(wait=False, cancel_futures=True)
        if not said:
            yield Lines([], resume_at, mtime)

    async def _grep_backfill(self, handle, size: int, mtime: float) -> AsyncGenerator[Lines, None]:
        """Yield grep's matches in ``[0, resume_at)``, where ``resume_at`` ends the
        last whole line present when we started; following goes on from there.
        ``mtime``: the log's, from the same ``fstat`` as ``size``; a log that ends
        with a whole line sends no ``Data`` after its backfill, so the lines must
        say how old they are (else a big stalled log looked fresh).

        The bytes are cut at line starts into one piece per CPU, each grepped
        by its own process at once, as on a remote box (``grep_filter``).
        """
        resume_at = _last_line_end(handle, size)
        cuts = await asyncio.to_thread(self._cuts, handle, resume_at)
        starts = [0, *cuts]
        # One piece: grep itself, no shell or dd (a Mac's BSD dd cannot cut).
        commands = ([["sh", "-c", grep_piece(str(self.path), self.prefilter, start, end)]
                     for start, end in zip(starts, [*cuts, None])] if cuts
                    else [grep_command(self.prefilter, str(self.path))])
        # Each piece in a process group of its own: a piece is ``sh -c 'dd … | grep …'``, and
        # stopping the shell alone left its dd and grep running, blocked on their pipes.
        processes = [await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "LC_ALL": "C"}, start_new_session=True) for argv in commands]
        queues: list[PieceQueue] = [piece_queue() for _ in processes]
        readers = [asyncio.create_task(piece(queue, self._read_piece(process, start, resume_at, queue)))
                   for process, start, queue in zip(processes, starts, queues)]
        batch: list[tuple[int, bytes]] = []
        batch_bytes = 0
        try:
            async for lines in in_order(queues):
                batch += lines
                batch_bytes += sum(len(line) for _, line in lines)
                if batch_bytes >= _LINES_BATCH_BYTES:
                    yield Lines(batch, resume_at, mtime)
                    batch, batch_bytes = [], 0
        finally:
            for reader in readers:
                reader.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
            for process in processes:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)  # the shell, its dd and its grep
                # What is left in the pipe is read to its end: a piece held back (its queue
                # full) stopped reading it, and Python's wait() waits for the pipe too.
                await process.communicate()
        yield Lines(batch, resume_at, mtime)

    async def _read_piece(self, process: asyncio.subprocess.Process, start: int, resume_at: int,
                          queue: PieceQueue) -> None:
        assert process.stdout is not None  # started with stdout=PIPE
        await drain(process.stdout, start, resume_at, queue)
        if (status := await process.wait()) not in (0, 1):  # 1: no line matched
            raise SourceError(f"{self.path}: grep stopped before the end of the file (status {status})")

    def _cuts(self, handle, resume_at: int) -> list[int]:
        """Line starts that split ``[0, resume_at)`` into pieces (none where dd cannot cut)."""
        nears = piece_starts(resume_at, os.cpu_count() or 1, self.piece_min_bytes)
        if not nears or not _dd_can_cut():
            return []
        cuts: list[int] = []
        for near in nears:
            handle.seek(near)
            line = handle.readline(_MAX_CUT_SEARCH)
            cut = near + len(line)
            if line.endswith(b"\n") and (cuts[-1] if cuts else 0) < cut < resume_at:
                cuts.append(cut)
        return cuts

    async def _reopen(self):
        while True:
            try:
                return self._open()
            except SourceError:
                await asyncio.sleep(self.poll_seconds)

    async def read_range(self, start: int, end: int) -> bytes:
        handle = self._open()
        with handle:
            handle.seek(start)
            return await asyncio.to_thread(handle.read, max(0, end - start))

    async def close(self) -> None:
        """Nothing stays open between calls."""

    def accelerator_host(self) -> AcceleratorHost:
        return this_host()
