"""What ``rlwatch status`` keeps between runs, so each run reads only the log's new bytes.

tmux runs ``status-right`` commands every few seconds, for days. Re-reading
a gigabyte log each time is out of the question, and so is keeping the whole
run: a 100k-step run's series are tens of megabytes, which would be read and
rewritten on every call. What is kept instead is small and bounded:

* the scanner, mid-log (its offset, a half-written last line, its counters);
* the last few hundred step records — as many as the rules look back, twice
  over — plus the latest total, training progress bar and end marker, and
  the incidents printed since the oldest of those steps, with what their
  blocks say once read (the exception a crash ended on);
* the scheduler's last word on the job behind the log (a Ray or Slurm job's state).

Each call feeds the new bytes in and rebuilds a small model from what is
kept, and the rules judge that. So ``status`` reports the state of the
recent steps, while ``rlwatch check`` and the dashboard judge the whole run:
a nan at step 5 of a 10,000-step run that has since recovered no longer
turns the status line red.

The state is pickled under the user's cache directory, one file per log,
and is only ever read back by the same user.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tui import __version__
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import (
    CrashBlock,
    IncidentRecord,
    JobRecord,
    ProgressRecord,
    Record,
    RunEndRecord,
    StepRecord,
    TotalStepsRecord,
)
from tui.parsers.tqdm_progress import training_position
from tui.rules.rule_file import RuleSpec

# The bytes just before the read position are kept and compared on the next
# call: a log replaced or rewritten under the same name no longer has them.
TAIL_BYTES = 64
# Never fewer step records than this, whatever the rules ask for.
MIN_CONTEXT_STEPS = 200
# Bumped when StatusState changes shape or meaning; older cache files are then ignored.
# 2: failure blocks kept. 3: a remote log's last_write_at is the box's mtime, not when
# its bytes arrived (a kept arrival time would keep a hung run looking fresh for good).
# 4: a scheduler's job state kept.
_FORMAT = 4


def context_steps(rules: Iterable[RuleSpec]) -> int:
    """How many recent steps to keep: twice the furthest any rule looks back."""
    furthest = max((rule.warmup + int(rule.params.get("window", 0)) + int(rule.params.get("steps", 0))
                    for rule in rules), default=0)
    return max(MIN_CONTEXT_STEPS, 2 * furthest)


@dataclass
class StatusState:
    """One log's state between two ``rlwatch status`` calls."""

    log: str
    scanner: LogScanner = field(default_factory=LogScanner)
    # Where the next read starts: past what the scanner holds, which may be
    # more than it has consumed (a line still being written).
    read_to: int = 0
    tail: bytes = b""
    steps: deque[StepRecord] = field(default_factory=deque)
    top_step: int | None = None
    total: TotalStepsRecord | None = None
    progress: ProgressRecord | None = None
    end: RunEndRecord | None = None
    incidents: list[IncidentRecord] = field(default_factory=list)
    # What the failure blocks among those incidents say, once read.
    blocks: list[CrashBlock] = field(default_factory=list)
    # The scheduler's last word on the job behind the log (a Ray or Slurm job), if any.
    job: JobRecord | None = None
    # When a new highest step was first read, and when the log was last written.
    newest_seen_at: float | None = None
    last_write_at: float | None = None

    def keep(self, records: list[Record], now: float, context: int) -> None:
        """Fold records in, keeping only the newest ``context`` steps and what they need."""
        for record in records:
            if isinstance(record, StepRecord) and record.metrics:
                self.steps.append(record)
                if self.top_step is None or record.step > self.top_step:
                    self.top_step, self.newest_seen_at = record.step, now
            elif isinstance(record, TotalStepsRecord):
                self.total = record
            elif isinstance(record, ProgressRecord) and training_position(record) is not None:
                self.progress = record
            elif isinstance(record, RunEndRecord):
                self.end = record
            elif isinstance(record, IncidentRecord):
                self.incidents.append(record)
            elif isinstance(record, CrashBlock):
                self.blocks.append(record)
            elif isinstance(record, JobRecord):
                self.job = record
        while len(self.steps) > context:
            self.steps.popleft()
        if self.steps:
            oldest = self.steps[0].offset
            self.incidents = [incident for incident in self.incidents if incident.offset >= oldest]
            self.blocks = [block for block in self.blocks if block.offset >= oldest]

    def model(self) -> RunModel:
        """A run model of the kept records, for the rules and the status line."""
        model = RunModel(self.log)
        records = [*(r for r in (self.total, self.progress) if r is not None), *self.steps,
                   *self.incidents, *self.blocks, *(r for r in (self.end, self.job) if r is not None)]
        model.apply(records, self.newest_seen_at or 0.0)
        model.read_to = self.read_to
        if self.last_write_at is not None:
            model.note_write(self.last_write_at)
        return model


def cache_path(cache_dir: Path, log: str) -> Path:
    """The state file of ``log`` (a path, or host:path) in ``cache_dir``."""
    return cache_dir / f"{hashlib.sha256(log.encode()).hexdigest()[:32]}.pickle"


def load_state(cache_dir: Path, log: str) -> StatusState | None:
    """The kept state of ``log``, or None when there is none this version can use."""
    try:
        with open(cache_path(cache_dir, log), "rb") as handle:
            form, version, state = pickle.load(handle)
    except Exception:  # noqa: BLE001 - missing, cut short, or from another version: start afresh
        return None
    if form != _FORMAT or version != __version__ or not isinstance(state, StatusState) or state.log != log:
        return None
    return state


def save_state(cache_dir: Path, state: StatusState) -> None:
    """Write ``state`` whole or not at all: tmux may run two status calls at once."""
    path = cache_path(cache_dir, state.log)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(partial, "wb") as handle:
            pickle.dump((_FORMAT, __version__, state), handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, path)
    except OSError:  # no cache is slower, never wrong
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
