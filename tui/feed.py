"""Pumping a source's bytes through the scanner into the model.

The scanner runs in a worker thread (a 1 GiB backfill must not freeze the
screen); records are folded into the model on the caller's event loop, so the
UI never reads a model that another thread is writing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.sources.base import CaughtUp, Data, Lines, LogSource, Reset, Status

# Chunks below this size are parsed inline; a thread hop costs more than them.
_INLINE_BYTES = 64 * 1024


class Feed:
    """Keeps one RunModel in step with one LogSource."""

    def __init__(
        self,
        source: LogSource,
        model: RunModel,
        on_change: Callable[[], None] | None = None,
        on_status: Callable[[Status | Reset], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.source = source
        self.model = model
        self.scanner = LogScanner()
        self.on_change = on_change
        self.on_status = on_status
        self.clock = clock

    async def run(self, follow: bool) -> None:
        """Read the log from where the scanner stopped; with ``follow``, never return."""
        async for event in self.source.stream(self.scanner.consumed, follow):
            if isinstance(event, Data):
                self.model.note_write(event.mtime if event.mtime is not None else self.clock())
                await self._ingest(event.data)
            elif isinstance(event, Lines):
                records = []
                for offset, line in event.lines:
                    records.extend(self.scanner.scan_line(line, offset))
                self.scanner.skip_to(event.resume_at)
                self._fold(records)
            elif isinstance(event, CaughtUp):
                self._fold(self.scanner.settle())
            elif isinstance(event, Reset):
                self.model.reset()
                self.scanner = LogScanner()
                self._notify_status(event)
            else:
                self._notify_status(event)
        if not follow:
            self._fold(self.scanner.finish())

    async def _ingest(self, data: bytes) -> None:
        if len(data) < _INLINE_BYTES:
            records = self.scanner.feed(data)
        else:
            records = await asyncio.to_thread(self.scanner.feed, data)
        self._fold(records)

    def _fold(self, records: list) -> None:
        if self.model.apply(records, self.clock()) and self.on_change is not None:
            self.on_change()

    def _notify_status(self, event: Status | Reset) -> None:
        if self.on_status is not None:
            self.on_status(event)
