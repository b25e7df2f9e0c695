"""The state of one run, built only from parser records.

The UI, ``rlwatch check`` and (later) the rules read this and nothing else.
It has no I/O and no clock of its own: the caller passes ``now`` so the
model stays testable and replayable.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from tui.model.aliases import STEP_TIME, Concept
from tui.model.merge import Source, TaggedSeries
from tui.model.series import Series
from tui.model.step_columns import StepColumns, step_columns
from tui.model.step_index import StepIndex
from tui.model.failures import Failure, group_failures
from tui.model.processes import ProcessReadings
from tui.parsers.records import (
    CrashBlock,
    IncidentRecord,
    JobRecord,
    PhaseRecord,
    ProgressRecord,
    Record,
    RunEndRecord,
    SampleMarkRecord,
    StepRecord,
    TotalStepsRecord,
)
from tui.parsers.run_config import RunConfig
from tui.parsers.tqdm_progress import training_position

# The phase lines kept (tui.parsers.stall_evidence): a stall reads those after the last step,
# and a step's own phases are a handful (validation's start and end, a save, a few retries),
# but each rollout engine reports its own progress: the last word of every engine of a
# data-parallel rollout (verl runs 8 and more) must still be here when one is stuck.
PHASES_KEPT = 64


@dataclass(slots=True)
class Progress:
    """Where the run stands according to its training progress bar."""

    done: int
    total: int
    sec_per_it: float | None
    eta_s: float | None
    elapsed_s: float | None


class RunModel:
    """Metric series, step index, progress and incidents of one run."""

    def __init__(self, log: str = "") -> None:
        self.log = log
        self.reset()

    def reset(self) -> None:
        """Forget everything (the log was truncated or replaced)."""
        self.series: dict[str, TaggedSeries] = {}
        self.step_index = StepIndex()
        # Steps only the JSONL or event files have (a run logging with trainer.logger=['file']).
        self._logger_only_steps: set[int] = set()
        self._last_logger_step: int | None = None
        # every_step()'s merge, with the step index and the sizes it was made from.
        self._every_step: tuple[tuple[int, int, int], array[int]] | None = None
        self.tqdm_sec_per_it = Series()
        self.progress: Progress | None = None
        self.announced_total: int | None = None
        self.incidents: list[IncidentRecord] = []
        # What each failure block says, by its first marker's offset, once read.
        self.crash_blocks: dict[int, CrashBlock] = {}
        self._failures: tuple[tuple[int, int, int], list[Failure]] | None = None
        # Where the last console step line ends and where the trainer printed its own end.
        self.last_step_line_end = -1
        # The newest step line came from a Ray actor (prefixed), not the driver.
        self.steps_prefixed = False
        # The pid in that prefix: the process that prints the steps (the trainer's).
        self.steps_pid: int | None = None
        # How far into the log the bytes have been read (the source's reader keeps it).
        self.read_to = 0
        self.end_marker_offset: int | None = None
        self.sample_offsets: list[int] = []
        # The latest lines that said which phase of a step the run began, oldest first.
        self.phases: deque[PhaseRecord] = deque(maxlen=PHASES_KEPT)
        self.dropped_items = 0
        self.last_new_step_at: float | None = None
        self.last_write_at: float | None = None
        self._own_end_seen = False  # the trainer's own end (verl's final validation)
        self._logger_end_at: int | None = None  # where a logger said the process ended (wandb)
        # The scheduler's latest word on the job that runs the log (Ray, Slurm), if any.
        self.job: JobRecord | None = None
        # The settings the run printed at start, and where (read once by the session).
        self.config: RunConfig | None = None
        # What shows a trainer starting in a log with nothing else yet (``run_start``).
        self.start_seen: str | None = None
        # The trainer's processes as read on their hosts while the run looked stuck (the session reads).
        self.processes = ProcessReadings()
        self.version = 0

    # -- ingest -------------------------------------------------------------

    def apply(self, records: Sequence[Record | StepColumns], now: float,
              source: Source = Source.CONSOLE) -> bool:
        """Fold parser records in; True if anything a reader shows changed.

        ``source`` says which of verl's loggers the records came from; where
        two report the same key and step, the more exact value is kept. Step
        records may come already transposed (``StepColumns``, from a worker
        process); either way steps are folded in after the other records, in
        their own order: no other record reads them.
        """
        if not records:
            return False
        blocks: list[StepColumns] = []
        steps: list[StepRecord] = []
        for record in records:
            if isinstance(record, StepRecord):
                steps.append(record)
            elif isinstance(record, StepColumns):
                if steps:
                    blocks.append(step_columns(steps))
                    steps = []
                blocks.append(record)
            elif isinstance(record, ProgressRecord):
                self._apply_progress(record)
            elif isinstance(record, TotalStepsRecord):
                self.announced_total = record.total
            elif isinstance(record, IncidentRecord):
                self.incidents.append(record)
            elif isinstance(record, CrashBlock):
                self.crash_blocks[record.offset] = record
            elif isinstance(record, SampleMarkRecord):
                self.sample_offsets.append(record.offset)
            elif isinstance(record, PhaseRecord):
                self.phases.append(record)
            elif isinstance(record, JobRecord):
                self.job = record
            elif isinstance(record, RunEndRecord):
                if record.by_logger:  # the run's end only while no step follows it
                    self._logger_end_at = max(record.offset, self._logger_end_at or 0)
                    continue
                self._own_end_seen = True
                if self.end_marker_offset is None or record.offset > self.end_marker_offset:
                    self.end_marker_offset = record.offset
        if steps:
            blocks.append(step_columns(steps))
        for block in blocks:
            self._apply_steps(block, now, source)
        self.version += 1
        return True

    def _apply_steps(self, block: StepColumns, now: float, source: Source) -> None:
        """Fold steps in: each step's line into the index, then the values.

        A backfill brings a thousand lines of the same ~50 keys at once (a fleet,
        twenty such logs): when their steps ascend, each key's column goes into its
        series in one piece where it all comes after the series' last step. The
        result is the same as offering each value in turn, which is what happens
        otherwise.
        """
        self.dropped_items += block.dropped
        if block.columns is not None and source == Source.CONSOLE and \
                self.step_index.extend(block.steps, block.offsets, block.ends):
            self._indexed_after(block, now)  # a backfill's lines, all new last steps
        else:
            for step, offset, end in zip(block.steps, block.offsets, block.ends):
                self._index_step(step, offset, end, now, source)
        if block.prefixed is not None and source == Source.CONSOLE:
            self.steps_prefixed = block.prefixed
            self.steps_pid = block.pid
        if block.columns is None:
            for record in block.unordered:
                for key, value in record.metrics.items():
                    self._series(key).offer(record.step, value, source)
            return
        for key, (key_steps, values) in block.columns.items():
            series = self._series(key)
            if not series.extend(key_steps, values, source):
                for step, value in zip(key_steps, values):
                    series.offer(step, value, source)

    def _series(self, key: str) -> TaggedSeries:
        """The series of ``key``, made empty the first time."""
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = TaggedSeries()
        return series

    def _indexed_after(self, block: StepColumns, now: float) -> None:
        """What ``_index_step`` notes of each console line, for lines just appended to the
        index in one piece (their steps ascend past every step it had)."""
        if self._logger_end_at is not None and max(block.offsets) > self._logger_end_at:
            self._logger_end_at = None
        if self._logger_only_steps:
            self._logger_only_steps.difference_update(block.steps)
        self.last_step_line_end = max(self.last_step_line_end, max(block.ends))
        self.last_new_step_at = now

    def _index_step(self, step: int, offset: int, end: int, now: float, source: Source) -> None:
        """A step line that carried metrics: its step and span, without its values."""
        if source == Source.CONSOLE:
            if self._logger_end_at is not None and offset > self._logger_end_at:
                self._logger_end_at = None  # the run went on: the logger's end was another's
            # Only a console record's offsets are a span of the log the step
            # detail reads; the other loggers' steps add values, not lines.
            last = self.step_index.last_step()
            self.step_index.add(step, offset, end)
            self._logger_only_steps.discard(step)
            self.last_step_line_end = max(self.last_step_line_end, end)
            if last is None or step > last:
                self.last_new_step_at = now
        elif self.step_index.span(step) is None:
            self._logger_only_steps.add(step)
            if self._last_logger_step is None or step > self._last_logger_step:
                self._last_logger_step = step

    def _apply_progress(self, record: ProgressRecord) -> None:
        position = training_position(record)
        if position is None:
            return
        done, total = position
        self.progress = Progress(done, total, record.sec_per_it, record.eta_s, record.elapsed_s)
        if record.sec_per_it is not None and done > 0:
            self.tqdm_sec_per_it.set(done, record.sec_per_it)

    # -- queries ------------------------------------------------------------

    @property
    def step_count(self) -> int:
        """Distinct steps that carried metrics, in the console log or only in another logger's files."""
        return len(self.step_index) + len(self._logger_only_steps)

    def every_step(self) -> array[int]:
        """Every step that carried metrics, ascending: the console log's and those only the
        JSONL or event files have. The step index itself while there are none of the latter."""
        if not self._logger_only_steps:
            return self.step_index.steps
        # The index only grows and a step leaves the set only by joining it, so the sizes
        # change whenever the steps do (a reset makes a new index).
        made_from = (id(self.step_index), len(self.step_index), len(self._logger_only_steps))
        if self._every_step is None or self._every_step[0] != made_from:
            merged = sorted({*self.step_index.steps, *self._logger_only_steps})
            self._every_step = (made_from, array("q", merged))
        return self._every_step[1]

    def failures(self) -> list[Failure]:
        """The failure blocks of the log in order: incident markers grouped by block."""
        made_from = (len(self.incidents), len(self.crash_blocks), len(self.step_index))
        if self._failures is None or self._failures[0] != made_from:
            self._failures = (made_from, group_failures(self.incidents, self.crash_blocks,
                                                        self.step_index.step_before))
        return self._failures[1]

    def unread_failures(self, recent: int = 8) -> list[Failure]:
        """Failures whose block has not been read: every one after the last step line
        (the verdict rests on them) and the ``recent`` latest before it (to name them)."""
        failures = self.failures()
        after = [f for f in failures if f.offset >= self.last_step_line_end]
        before = [f for f in failures if f.offset < self.last_step_line_end][-recent:]
        return [f for f in before + after if f.block is None]

    def phases_since_last_step(self) -> list[PhaseRecord]:
        """The phase lines printed after the last console step line, oldest first: what
        the step under way began (verl prints a step's validation and save before its line)."""
        return [phase for phase in self.phases if phase.offset >= self.last_step_line_end]

    def step_lines_after(self, offset: int) -> int:
        """How many step lines end after byte ``offset``."""
        ends = self.step_index.ends
        return len(ends) - bisect_right(ends, offset)

    @property
    def last_step(self) -> int | None:
        """The highest step that carried metrics."""
        steps = [s for s in (self.step_index.last_step(), self._last_logger_step) if s is not None]
        return max(steps, default=None)

    @property
    def end_marker_seen(self) -> bool:
        """The trainer printed its end, or a logger did on the way out with no step after it
        (wandb's footer of an earlier run in a log a restarted run appends to is not this run's end)."""
        return self._own_end_seen or self._logger_end_at is not None

    def has_training_output(self) -> bool:
        """Whether the log holds what a run prints once it trains or fails: a step, a progress
        bar, a failure, its end, or a scheduler's word on its job."""
        return bool(self.step_count or self.progress is not None or self.incidents
                    or self.job is not None or self.end_marker_seen)

    @property
    def finished(self) -> bool:
        """The run printed its end (final validation, wandb summary) or reached its total."""
        if self.end_marker_seen:
            return True
        total, last = self.total_steps, self.last_step
        return total is not None and last is not None and last >= total

    @property
    def last_step_at(self) -> float | None:
        """Best estimate of when the newest step was logged.

        When rlwatch saw it arrive, unless the log's own modification time is
        earlier (a backfill sees every old step arrive "now").
        """
        known = [t for t in (self.last_new_step_at, self.last_write_at) if t is not None]
        return min(known) if known else None

    def note_write(self, when: float) -> None:
        """The log was last written at ``when`` (its mtime, or when bytes arrived)."""
        if self.last_write_at is None or when > self.last_write_at:
            self.last_write_at = when

    @property
    def total_steps(self) -> int | None:
        """Total steps from the progress bar, else from verl's announcement."""
        if self.progress is not None:
            return self.progress.total
        return self.announced_total

    @property
    def sec_per_it(self) -> float | None:
        """Seconds per step: tqdm's rate, else the newest step-time metric."""
        if self.progress is not None and self.progress.sec_per_it is not None:
            return self.progress.sec_per_it
        series, _ = self.series_for(STEP_TIME)
        last = series.last() if series is not None else None
        return last[1] if last is not None else None

    @property
    def eta_s(self) -> float | None:
        """Seconds left: tqdm's own estimate, else remaining steps × s/it."""
        if self.progress is not None and self.progress.eta_s is not None:
            return self.progress.eta_s
        total, last, rate = self.total_steps, self.last_step, self.sec_per_it
        if total is None or last is None or rate is None:
            return None
        return max(0, total - last) * rate

    def latest(self) -> dict[str, float]:
        """Every metric key seen, with its value at the last step that had it."""
        out = {}
        for key, series in self.series.items():
            last = series.last()
            if last is not None:
                out[key] = last[1]
        return out

    def series_for(self, concept: Concept) -> tuple[Series | None, str | None]:
        """The series behind a concept and the key it came from.

        Step time falls back to the progress bar's s/it when the run logs no
        timing metric (the v0.1 SFT trainer, TRL).
        """
        key = concept.resolve(self.series)
        if key is not None:
            return self.series[key], key
        if concept is STEP_TIME and len(self.tqdm_sec_per_it):
            return self.tqdm_sec_per_it, "tqdm s/it"
        return None, None
