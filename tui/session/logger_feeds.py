"""Feeding a run's file-logger JSONL and TensorBoard events into the model beside its console log.

The console log stays the backbone: its lines are the step index and the
text of the step detail. These feeds add the other loggers' values to the
same series, tagged with their source, and the model keeps the most exact
value of each key at each step (``tui.model.merge``).

A run with no console log (``tui.sources.logger_run``) has only these feeds;
then they also tell the model when the run last wrote (``note_write``), as
the console feed does, so the stalled rule judges such a run by its files.

Unlike the console feed, a JSONL that is truncated does not reset the model:
verl truncates it whenever the run restarts, and the values already merged
are still the run's; the restarted run's records replace them step by step.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from tui.model.merge import Source
from tui.model.run_model import RunModel
from tui.parsers.records import StepRecord
from tui.parsers.verl_jsonl import JsonlScanner
from tui.sources.base import Data, LogSource, Reset, SourceError
from tui.sources.run_folder import RunFolder
from tui.sources.tensorboard_events import TensorBoardDir

# TensorBoard writers flush every 120 s (torch's default); polling more often
# than this only costs stat calls.
TENSORBOARD_POLL_SECONDS = 5.0


class JsonlFeed:
    """Keeps a model in step with verl's file-logger JSONL (a local or remote LogSource)."""

    def __init__(self, source: LogSource, model: RunModel,
                 on_change: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.time, note_writes: bool = False) -> None:
        """``note_writes``: the JSONL is the run's only record, so its writes are the run's."""
        self.source = source
        self.model = model
        self.scanner = JsonlScanner()
        self.on_change = on_change
        self.clock = clock
        self.note_writes = note_writes

    async def run(self, follow: bool) -> None:
        """Read from where the scanner stopped; with ``follow``, never return."""
        async for event in self.source.stream(self.scanner.consumed, follow):
            if isinstance(event, Data):
                if self.note_writes and (follow or event.mtime is not None):
                    # Bytes with no time of their own: followed, they come as they are
                    # written; read once, the time the files were found with stands.
                    self.model.note_write(event.mtime if event.mtime is not None else self.clock())
                self._fold(await asyncio.to_thread(self.scanner.feed, event.data))
            elif isinstance(event, Reset):
                self.scanner = JsonlScanner()
        if not follow:
            self._fold(self.scanner.finish())

    def _fold(self, records: list[StepRecord]) -> None:
        if self.model.apply(records, self.clock(), Source.JSONL) and self.on_change is not None:
            self.on_change()

    def problems(self) -> list[str]:
        """What could not be read, for the user."""
        skipped = self.scanner.skipped_lines
        return [f"{self.source.label}: {skipped} line(s) are not verl records "
                "(cut by a restart, or junk); skipped"] if skipped else []


class TensorBoardFeed:
    """Keeps a model in step with a run's TensorBoard directory."""

    def __init__(self, directory: TensorBoardDir, model: RunModel,
                 on_change: Callable[[], None] | None = None,
                 poll_seconds: float = TENSORBOARD_POLL_SECONDS,
                 clock: Callable[[], float] = time.time,
                 sync: Callable[[], Awaitable[float | None]] | None = None,
                 note_writes: bool = False) -> None:
        """``sync``: what brings ``directory`` up to date before each poll (a remote mirror)
        and says when the files were last written there; ``note_writes``: the event files
        are the run's only record, so their writes are the run's."""
        self.directory = directory
        self.model = model
        self.on_change = on_change
        self.poll_seconds = poll_seconds
        self.clock = clock
        self.sync = sync
        self.note_writes = note_writes

    async def run(self, follow: bool) -> None:
        """Read every event file to its end; with ``follow``, keep polling for more.

        Followed, a remote mirror whose connection dropped is tried again at the
        next poll: the run's own source says so in the header and reconnects.
        """
        while True:
            try:
                await self._read_to_end()
            except SourceError:
                if not follow:
                    raise
            if not follow:
                return
            await asyncio.sleep(self.poll_seconds)

    async def _read_to_end(self) -> None:
        if self.sync is not None:
            written = await self.sync()
        else:
            written = await asyncio.to_thread(self.directory.last_written)
        if self.note_writes and written is not None:
            self.model.note_write(written)
        while True:
            records, more = await asyncio.to_thread(self.directory.poll)
            if self.model.apply(records, self.clock(), Source.TENSORBOARD) and self.on_change:
                self.on_change()
            if not more:  # else the poll stopped at its batch size
                break

    def problems(self) -> list[str]:
        """What could not be read, for the user."""
        return self.directory.problems()


async def logger_feeds(folder: RunFolder, model: RunModel,
                       on_change: Callable[[], None] | None = None
                       ) -> tuple[list[JsonlFeed | TensorBoardFeed], tuple[str, ...]]:
    """Feeds for the JSONL and TensorBoard files the run's log points at, and notes for the user."""
    found = await folder.logger_files()
    feeds: list[JsonlFeed | TensorBoardFeed] = []
    if found.alone and found.written_at is not None:
        model.note_write(found.written_at)
    if found.jsonl is not None:
        feeds.append(JsonlFeed(folder.jsonl_source(found.jsonl), model, on_change,
                               note_writes=found.alone))
    if found.tensorboard is not None:
        local, sync = folder.event_sync(found.tensorboard)
        feeds.append(TensorBoardFeed(TensorBoardDir(local), model, on_change, sync=sync,
                                     note_writes=found.alone))
    return feeds, found.notes


async def read_logger_files(model: RunModel, folder: RunFolder | None) -> tuple[str, ...]:
    """Merge, once, the JSONL and event files of the run into ``model``; notes for the user.

    ``folder`` is where the run's files are (None: nowhere, as for the demo).
    """
    if folder is None:
        return ()
    try:
        feeds, notes = await logger_feeds(folder, model)
    except SourceError as error:
        return (f"the run's logger files were not read: {error}",)
    problems: list[str] = []
    for feed in feeds:
        try:
            await feed.run(follow=False)
        except SourceError as error:
            problems.append(str(error))
        problems += feed.problems()
    return notes + tuple(problems)
