"""A log file on this machine, read in large chunks and followed as it grows.

Following polls ``os.stat`` a few times a second once the end is reached:
one cheap syscall per tick, no busy loop, and it works the same on every
filesystem (inotify does not see writes over NFS, where runs often live).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

from tui.sources.base import Data, Reset, SourceError, SourceEvent

CHUNK_BYTES = 4 * 1024 * 1024
POLL_SECONDS = 0.2


def _identity(stat: os.stat_result) -> tuple[int, int]:
    return stat.st_dev, stat.st_ino


class LocalFile:
    """A local log file."""

    def __init__(self, path: str | os.PathLike[str], poll_seconds: float = POLL_SECONDS) -> None:
        self.path = Path(path)
        self.poll_seconds = poll_seconds

    @property
    def label(self) -> str:
        return str(self.path)

    async def connect(self) -> str | None:
        """Fail early, with the reason, if the file cannot be read."""
        self._open().close()
        return None

    def _open(self):
        try:
            return open(self.path, "rb")
        except FileNotFoundError:
            raise SourceError(f"{self.path}: no such file") from None
        except IsADirectoryError:
            raise SourceError(f"{self.path}: is a directory, not a log file") from None
        except PermissionError:
            raise SourceError(f"{self.path}: permission denied") from None
        except OSError as error:
            raise SourceError(f"{self.path}: {error.strerror or error}") from None

    async def stream(self, start: int, follow: bool) -> AsyncIterator[SourceEvent]:
        """Yield chunks from ``start``; when following, notice truncation and replacement."""
        handle = self._open()
        try:
            identity = _identity(os.fstat(handle.fileno()))
            offset = start
            handle.seek(offset)
            while True:
                data = await asyncio.to_thread(handle.read, CHUNK_BYTES)
                if data:
                    yield Data(offset, data)
                    offset += len(data)
                    continue
                if not follow:
                    return
                await asyncio.sleep(self.poll_seconds)
                reason = self._changed(identity, offset)
                if reason is None:
                    continue
                yield Reset(reason)
                handle.close()
                handle = await self._reopen()
                identity = _identity(os.fstat(handle.fileno()))
                offset = 0
        finally:
            handle.close()

    def _changed(self, identity: tuple[int, int], offset: int) -> str | None:
        """Why the file we hold is no longer the log at ``path``, if it is not."""
        try:
            stat = os.stat(self.path)
        except OSError:
            return None  # mid-rotation: keep reading the old file until a new one appears
        if _identity(stat) != identity:
            return f"{self.path} was replaced; reading the new file from the start"
        if stat.st_size < offset:
            return f"{self.path} was truncated; reading it again from the start"
        return None

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
