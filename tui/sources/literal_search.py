"""The lines of a big local log that hold any of a set of fixed strings, at memory speed.

A backfill must pick the few metric, progress and failure lines out of
gigabytes of reward-function chatter. GNU grep does that with one string at
memory speed, but its many-string search (the scanner has dozens of needles:
step lines, bars, every trainer's grammar, every way a run can fail) costs
ten to twenty times as much on natural-language text. Hyperscan (Intel's
SIMD matcher, through the ``hyperscan`` bindings) matches all of them at a few
GB/s and releases the GIL while it scans, so the log is mapped and scanned in
place, one slice per CPU, with no process or copy. Where the bindings are not
installed (they ship for x86-64 Linux), the grep pieces of
:mod:`tui.sources.grep_filter` do the same job more slowly.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any


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
        self._longest = max(len(needle) for needle in needles)
        self._database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        # Literal patterns: each needle's bytes with every special character escaped
        # (latin-1 maps bytes to code points one to one, UTF-8 needles included).
        patterns = [re.escape(needle.decode("latin-1")).encode("latin-1") for needle in needles]
        self._database.compile(expressions=patterns, ids=list(range(len(patterns))),
                               elements=len(patterns), flags=[0] * len(patterns))

    def lines(self, path: str | os.PathLike[str], end: int,
              workers: int | None = None) -> list[tuple[int, bytes]]:
        """(offset, line) of every line in ``[0, end)`` of ``path`` that holds a needle,
        in file order; ``end`` must be a line start (the end of the last whole line)."""
        if end <= 0:
            return []
        workers = max(1, min(workers or os.cpu_count() or 1, 16))
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                cuts = [end * i // workers for i in range(workers + 1)]
                # Each slice reaches a needle's length past its cut, so a match across
                # a cut is seen whole; lines seen twice are merged below.
                slices = [(cuts[i], min(end, cuts[i + 1] + self._longest - 1)) for i in range(workers)]
                with ThreadPoolExecutor(workers) as pool:
                    ends = sorted(set().union(*pool.map(lambda s: self._match_ends(view, *s), slices)))
                return _whole_lines(mapped, ends, end)
            finally:
                view.release()

    def _match_ends(self, view: memoryview, start: int, stop: int) -> set[int]:
        """Absolute end offsets of the matches in ``view[start:stop]`` (one scratch a thread)."""
        found: list[int] = []
        # The binding scans any buffer (a slice of the mapped file, not copied); its
        # type stub names only str and bytes.
        self._database.scan(view[start:stop],  # type: ignore[type-var]
                            match_event_handler=lambda _id, _from, to, _flags, _ctx: found.append(start + to),
                            scratch=self._hs.Scratch(self._database))
        return set(found)


def _whole_lines(data: mmap.mmap, ends: list[int], limit: int) -> list[tuple[int, bytes]]:
    """The lines (with their newline) that hold the match ends, each once, in order."""
    out: list[tuple[int, bytes]] = []
    line_end = -1
    for match_end in ends:
        if match_end <= line_end:
            continue  # another needle on a line already taken
        start = data.rfind(b"\n", 0, match_end - 1) + 1
        newline = data.find(b"\n", match_end - 1, limit)
        line_end = limit if newline == -1 else newline + 1
        out.append((start, data[start:line_end]))
    return out
