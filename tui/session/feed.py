"""Pumping a source's bytes through the scanner into the model.

A big batch is scanned off the event loop (a 1 GiB backfill must not freeze
the screen): in a worker thread, or in a fleet's worker processes
(``tui.session.parse_pool``: twenty runs' backfills at once); records are
folded into the model on the caller's event loop, so the UI never reads a
model that another thread is writing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from tui.model.run_model import RunModel
from tui.model.step_columns import StepColumns
from tui.parsers.crash_block import read_block
from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import CrashBlock, Record
from tui.session.parse_pool import Batch, ParsePool, scan_batch
from tui.sources.base import CaughtUp, Data, JobState, Lines, LogSource, Reset, Status

# Batches below this size are parsed inline; a thread or process hop costs more than them.
_INLINE_BYTES = 64 * 1024
# Reading failure blocks: each read covers this much of the log from the first
# unread block (a few hundred KiB hold every traceback of a crashed run's
# ranks), starts a little before it (the line before says whether Python
# ignored the exception), and one pass makes at most this many reads: each is
# a round trip on a remote box.
_BLOCK_WINDOW = 256 * 1024
_LOOK_BEHIND = 1024
_BLOCK_READS = 4


class Feed:
    """Keeps one RunModel in step with one LogSource."""

    def __init__(
        self,
        source: LogSource,
        model: RunModel,
        on_change: Callable[[], None] | None = None,
        on_status: Callable[[Status | Reset], None] | None = None,
        clock: Callable[[], float] = time.time,
        pool: ParsePool | None = None,
        on_caught_up: Callable[[], None] | None = None,
    ) -> None:
        """``pool``: worker processes for the big batches (a fleet's), else a thread;
        ``on_caught_up``: called once, when the log has been read to the end it had (the
        backfill is in and its failures read)."""
        self.source = source
        self.model = model
        self.scanner = LogScanner()
        self.on_change = on_change
        self.on_status = on_status
        self.clock = clock
        self.pool = pool
        self.on_caught_up = on_caught_up

    async def run(self, follow: bool) -> None:
        """Read the log from where the scanner stopped; with ``follow``, never return."""
        async for event in self.source.stream(self.scanner.consumed, follow):
            if isinstance(event, Data):
                self.model.note_write(event.mtime if event.mtime is not None else self.clock())
                self.model.read_to = max(self.model.read_to, event.offset + len(event.data))
                self._fold(await self._scan(event.data))
            elif isinstance(event, Lines):
                records = await self._scan(event.lines)
                self.scanner.skip_to(event.resume_at)
                self.model.read_to = max(self.model.read_to, event.resume_at)
                if event.mtime is not None:
                    self.model.note_write(event.mtime)
                self._fold(records)
            elif isinstance(event, CaughtUp):
                self._fold(self.scanner.settle())
                await self._read_failures(follow=True)
                if self.on_caught_up is not None:
                    self.on_caught_up()
                    self.on_caught_up = None
            elif isinstance(event, JobState):
                self._fold([event.record])
            elif isinstance(event, Reset):
                self.model.reset()
                self.scanner = LogScanner()
                self._notify_status(event)
            else:
                self._notify_status(event)
        if not follow:
            self._fold(self.scanner.finish())
            await self._read_failures(follow=False)

    async def _scan(self, batch: Batch) -> list[Record | StepColumns]:
        """The records of ``batch``, the scanner moved past it: a big one in the pool's
        workers, else bytes in a thread (a remote grep's picked lines stay here
        without a pool, as they always did)."""
        size = len(batch) if isinstance(batch, bytes) else sum(len(line) for _, line in batch)
        if size < _INLINE_BYTES or (self.pool is None and not isinstance(batch, bytes)):
            self.scanner, records = scan_batch(self.scanner, batch)
        elif self.pool is not None:
            self.scanner, records = await self.pool.scan(self.scanner, batch)
        else:
            self.scanner, records = await asyncio.to_thread(scan_batch, self.scanner, batch)
        return records

    def _fold(self, records: list) -> None:
        if self.model.apply(records, self.clock()) and self.on_change is not None:
            self.on_change()

    async def _read_failures(self, follow: bool) -> None:
        """Name the failures the verdict rests on (see ``read_failure_blocks``)."""
        found = await read_failure_blocks(self.model, self.source, self.scanner.consumed, follow)
        if found and self.on_change is not None:
            self.on_change()

    def _notify_status(self, event: Status | Reset) -> None:
        if self.on_status is not None:
            self.on_status(event)


async def read_failure_blocks(model: RunModel, source: LogSource, known_end: int,
                              follow: bool) -> list[CrashBlock]:
    """Read what the model's unread failure blocks say (their exception lines) into it.

    Only the blocks the verdict rests on and the latest few are read (see
    ``RunModel.unread_failures``), in windows of the log around them, so a
    log whose reward function prints a traceback per sample costs a bounded
    number of reads. ``known_end`` is where the bytes read so far end; with
    ``follow`` a block still being written there is left for a later pass.
    Returns the blocks read, for a caller that keeps records of its own.
    """
    found: list[CrashBlock] = []
    waiting: set[int] = set()
    for _ in range(_BLOCK_READS):
        pending = [f for f in model.unread_failures() if f.offset not in waiting
                   and f.offset not in {block.offset for block in found}]
        if not pending or pending[0].offset >= known_end:
            break
        start = max(0, pending[0].offset - _LOOK_BEHIND)
        stop = min(known_end, pending[0].offset + _BLOCK_WINDOW)
        window = await source.read_range(start, stop)
        stop = start + len(window)
        new: list[CrashBlock] = []
        for failure in pending:
            if failure.offset >= stop:
                break
            cut_short = stop < known_end
            block = read_block(window, start, failure.offset, failure.marker.kind,
                               more_may_come=cut_short or follow)
            if block is None and failure is pending[0] and cut_short:
                # Longer than a window without an exception line: take it as it is.
                block = read_block(window, start, failure.offset, failure.marker.kind, False)
            if block is None:
                if not cut_short:
                    waiting.add(failure.offset)  # still being written: a later pass
                break
            new.append(block)
        if not new:
            if not waiting:
                break
            continue
        found += new
        model.apply(new, 0.0)
    return found
