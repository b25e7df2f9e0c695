"""The driver log as it arrived, kept in a file on this machine.

Ray serves a job's log from its start as a stream, never a byte range, while the
step detail and the failure view read ranges of it again and again; and verbose
runs write gigabytes. So what arrives is appended to an unnamed temporary file
(gone when closed, or when rlwatch dies) and ranges are read back from there,
not held in memory.
"""

from __future__ import annotations

import asyncio
import os
import tempfile


class Spool:
    """An append-only local copy of a log, read by byte range."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="rlwatch-ray-")
        self.size = 0

    def append(self, data: bytes) -> int:
        """Add ``data`` at the end; returns the offset it starts at."""
        offset = self.size
        os.pwrite(self._file.fileno(), data, offset)
        self.size += len(data)
        return offset

    async def read(self, start: int, end: int) -> bytes:
        """The bytes in ``[start, end)`` of what arrived so far."""
        start, end = max(0, start), min(end, self.size)
        if end <= start:
            return b""
        return await asyncio.to_thread(os.pread, self._file.fileno(), end - start, start)

    def close(self) -> None:
        self._file.close()
