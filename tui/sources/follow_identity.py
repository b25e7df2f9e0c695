"""Which file a follower follows, so that a log replaced or rewritten is read anew, not merged.

A run restarted into the same log name either replaces the file (``mv run.log run.log.1``
and a new ``run.log``: another inode) or empties it and writes again (``>`` in a shell:
the same inode). A follower that only compares the size with its offset misses the second
once the new run has written past that offset, and reads on from the middle of the new file:
new steps lost, the old ones kept. So a follower knows its file by its device and inode, and
by its first bytes (``HEAD_BYTES`` of them), which an appending writer never changes; locally
also by the last bytes it read, which a rewrite that starts alike (the same config printed
first) does change. Any of them changed: the file is read again from the start, and the user
is told in the same words wherever the log lives (``replaced`` and ``truncated``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

# How many of a log's first bytes say which file it is (a run's first lines: its command,
# its config, its start time).
HEAD_BYTES = 4096
# How many of the bytes just before the offset are checked again (locally).
_TAIL_BYTES = 256


def replaced(label: str) -> str:
    """The notice for a log that another file took the place of."""
    return f"{label} was replaced; reading the new file from the start"


def truncated(label: str) -> str:
    """The notice for a log emptied (and perhaps written again) under its follower."""
    return f"{label} was truncated; reading it again from the start"


@dataclass(frozen=True, slots=True)
class LocalIdentity:
    """A local log as its follower last saw it: device and inode, size, its first bytes, and
    the last bytes it read (``tail``, ending at ``tail_end``)."""

    device: int
    inode: int
    size: int
    head: bytes
    tail: bytes
    tail_end: int

    @classmethod
    def of(cls, fd: int, offset: int) -> LocalIdentity:
        """The identity of the open file ``fd``, to be read from ``offset``."""
        stat = os.fstat(fd)
        tail_start = max(0, offset - _TAIL_BYTES)
        return cls(stat.st_dev, stat.st_ino, stat.st_size, _read(fd, HEAD_BYTES, 0),
                   _read(fd, offset - tail_start, tail_start), offset)

    def read(self, data: bytes, end: int) -> LocalIdentity:
        """The same file, ``data`` read from it up to ``end`` (no I/O: its last bytes are kept)."""
        before = self.tail if self.tail_end == end - len(data) and len(data) < _TAIL_BYTES else b""
        return replace(self, tail=before[len(data) - _TAIL_BYTES:] + data[-_TAIL_BYTES:], tail_end=end)

    def change(self, path: str | os.PathLike[str], fd: int, offset: int
               ) -> tuple[str | None, LocalIdentity]:
        """Whether the log at ``path`` is still this file, read up to ``offset`` through ``fd``:
        ``"replaced"``, ``"truncated"`` or None, and the identity to compare with next time.

        Costs one ``stat`` a poll; a few bytes are read again only when the size changed."""
        try:
            stat = os.stat(path)
        except OSError:
            return None, self  # mid-rotation: keep reading the old file until a new one appears
        if (stat.st_dev, stat.st_ino) != (self.device, self.inode):
            return "replaced", self
        if stat.st_size < offset:
            return "truncated", self
        if stat.st_size == self.size:
            return None, self
        if (_read(fd, len(self.head), 0) != self.head
                or _read(fd, len(self.tail), self.tail_end - len(self.tail)) != self.tail):
            return "truncated", self
        return None, replace(self, size=stat.st_size)


def _read(fd: int, size: int, at: int) -> bytes:
    """``size`` bytes of ``fd`` from ``at``; none where it cannot seek (a FIFO, a tty)."""
    try:
        return os.pread(fd, size, at)
    except OSError:
        return b""
