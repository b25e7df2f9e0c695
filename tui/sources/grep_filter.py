"""Letting ``grep`` pick out the interesting lines of a big log.

``grep -a -b -F`` with a handful of fixed strings reads a file at disk speed,
several times faster than Python can look for the same strings; its output is
``OFFSET:LINE`` per match, which is all the scanner needs. The same command
runs locally and, over SSH, on the training box.
"""

from __future__ import annotations

from collections.abc import Sequence


def grep_command(needles: Sequence[bytes], path: str) -> list[str]:
    """The argv of a byte-offset, fixed-string, binary-safe grep for ``needles`` in ``path``."""
    argv = ["grep", "-a", "-b", "-F"]
    for needle in needles:
        argv += ["-e", needle.decode()]
    return [*argv, "--", path]


class GrepOutput:
    """Splits ``grep -b`` output, fed in arbitrary chunks, into (offset, line) pairs.

    ``base`` is added to every offset: grep counts from where it started reading,
    which for a piece of a file is the piece's start.
    """

    def __init__(self, base: int = 0) -> None:
        self._pending = b""
        self._base = base

    def feed(self, chunk: bytes) -> list[tuple[int, bytes]]:
        """Complete ``(offset, line)`` pairs in the bytes so far; lines keep their newline."""
        data = self._pending + chunk
        end = data.rfind(b"\n") + 1
        self._pending = data[end:]
        out = []
        start = 0
        while start < end:
            stop = data.index(b"\n", start) + 1  # not splitlines(): a line may hold \r
            offset, colon, line = data[start:stop].partition(b":")
            if colon and offset.isdigit():
                out.append((self._base + int(offset), line))
            start = stop
        return out
