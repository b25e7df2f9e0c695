"""Feeding a run's file-logger JSONL and TensorBoard events into the model beside its console log.

The console log stays the backbone: its lines are the step index and the
text of the step detail. These feeds add the other loggers' values to the
same series, tagged with their source, and the model keeps the most exact
value of each key at each step (``tui.model.merge``).

Unlike the console feed, a JSONL that is truncated does not reset the model:
verl truncates it whenever the run restarts, and the values already merged
are still the run's; the restarted run's records replace them step by step.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from tui.model.merge import Source
from tui.model.run_model import RunModel
from tui.parsers.records import StepRecord
from tui.parsers.verl_jsonl import JsonlScanner
from tui.sources.base import Data, LogSource, Reset, SourceError
from tui.sources.local_file import LocalFile
from tui.sources.run_files import find_logger_files
from tui.sources.tensorboard_events import TensorBoardDir

# TensorBoard writers flush every 120 s (torch's default); polling more often
# than this only costs stat calls.
TENSORBOARD_POLL_SECONDS = 5.0


class JsonlFeed:
    """Keeps a model in step with verl's file-logger JSONL (a local or remote LogSource)."""

    def __init__(self, source: LogSource, model: RunModel,
                 on_change: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.source = source
        self.model = model
        self.scanner = JsonlScanner()
        self.on_change = on_change
        self.clock = clock

    async def run(self, follow: bool) -> None:
        """Read from where the scanner stopped; with ``follow``, never return."""
        async for event in self.source.stream(self.scanner.consumed, follow):
            if isinstance(event, Data):
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
                 clock: Callable[[], float] = time.time) -> None:
        self.directory = directory
        self.model = model
        self.on_change = on_change
        self.poll_seconds = poll_seconds
        self.clock = clock

    async def run(self, follow: bool) -> None:
        """Read every event file to its end; with ``follow``, keep polling for more."""
        while True:
            records, more = await asyncio.to_thread(self.directory.poll)
            if self.model.apply(records, self.clock(), Source.TENSORBOARD) and self.on_change:
                self.on_change()
            if more:
                continue  # the poll stopped at its batch size
            if not follow:
                return
            await asyncio.sleep(self.poll_seconds)

    def problems(self) -> list[str]:
        """What could not be read, for the user."""
        return self.directory.problems()


def logger_feeds(log: Path, run_dir: Path | None, model: RunModel,
                 on_change: Callable[[], None] | None = None
                 ) -> tuple[list[JsonlFeed | TensorBoardFeed], tuple[str, ...]]:
    """Feeds for the local JSONL and TensorBoard files ``log`` points at, and notes for the user."""
    found = find_logger_files(log, run_dir)
    feeds: list[JsonlFeed | TensorBoardFeed] = []
    if found.jsonl is not None:
        feeds.append(JsonlFeed(LocalFile(found.jsonl), model, on_change))
    if found.tensorboard is not None:
        feeds.append(TensorBoardFeed(TensorBoardDir(found.tensorboard), model, on_change))
    return feeds, found.notes


async def read_logger_files(model: RunModel, target: str, log: str) -> tuple[str, ...]:
    """Merge, once, the JSONL and event files of a local run into ``model``; notes for the user.

    ``target`` is what the user named (run directory or log file) and ``log``
    the console log read from it. A target that is not on this machine has
    nothing to merge here.
    """
    log_path = Path(log)
    if not log_path.is_file():
        return ()
    run_dir = Path(target).expanduser()
    feeds, notes = logger_feeds(log_path, run_dir if run_dir.is_dir() else None, model)
    problems: list[str] = []
    for feed in feeds:
        try:
            await feed.run(follow=False)
        except SourceError as error:
            problems.append(str(error))
        problems += feed.problems()
    return notes + tuple(problems)
