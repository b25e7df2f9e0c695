"""The typed records the parsers produce and the model consumes.

Every record carries the byte offset of the physical line it came from, so the
raw text behind any step can be fetched later by byte range instead of
re-reading the log.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One ``step:N - key:value - …`` line (or a trainer's dict line).

    ``offset``/``end`` delimit the physical line(s) in the log; ``dropped``
    counts items that were present but unreadable (cut lines, junk), so a
    reader can tell "absent" from "garbled".
    """

    step: int
    metrics: dict[str, float]
    offset: int
    end: int
    dropped: int = 0
    # The line carried a process prefix (Ray's ``(TaskRunner pid=1)``): the steps
    # come from an actor, and an unprefixed failure is the driver's.
    prefixed: bool = False
    # The pid in that prefix (``(TaskRunner pid=16672)``): the process that prints the steps,
    # whose death a supervisor may report by it (Ray's raylet: ``Worker PID: 16672``).
    pid: int | None = None


@dataclass(frozen=True, slots=True)
class ProgressRecord:
    """One tqdm update: ``desc: 15%|…| 49/320 [1:06:07<4:11:40, 55.72s/it]``."""

    desc: str
    n: int
    total: int | None
    elapsed_s: float | None
    eta_s: float | None
    sec_per_it: float | None
    offset: int
    # Set by a grammar that knows this bar counts the run's steps although its
    # description does not say so (the HF Trainer's bar has none).
    training: bool = False


@dataclass(frozen=True, slots=True)
class TotalStepsRecord:
    """verl's ``Total training steps: N`` announcement."""

    total: int
    offset: int


@dataclass(frozen=True, slots=True)
class IncidentRecord:
    """A line that means the run is in trouble: a traceback, OOM, NCCL timeout…"""

    kind: str
    text: str
    offset: int


@dataclass(frozen=True, slots=True)
class Where:
    """The rank, local rank, host and process of a failure, where the log says them."""

    rank: int | None = None
    local_rank: int | None = None
    host: str = ""
    pid: int | None = None

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) not in (None, "") for f in fields(self))

    def words(self) -> str:
        """``rank 1 (local rank 1) on node07``, as a finding says it ("" when unknown)."""
        parts = []
        if self.rank is not None:
            parts.append(f"rank {self.rank}")
            if self.local_rank is not None and self.local_rank != self.rank:
                parts.append(f"(local rank {self.local_rank})")
        elif self.local_rank is not None:
            parts.append(f"local rank {self.local_rank}")
        if self.host:
            parts.append(f"on {self.host}")
        if not parts and self.pid is not None:
            parts.append(f"pid {self.pid}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class CrashBlock:
    """What the block an incident marker opens says, read from the bytes after it.

    ``offset`` is the marker's (the incident it explains); markers before
    ``end`` belong to the same block. ``exception`` is the line a user needs
    (``RuntimeError: boom``, the last line of the traceback), or the marker's
    own line when the block has none (``Killed``); ``cause`` the line behind a
    more specific kind when the exception line does not say it (an OOM under
    a ``RayTaskError``). ``harmless``: Python said it ignored the exception.
    """

    offset: int
    end: int
    kind: str
    exception: str
    exception_offset: int | None = None
    cause: str = ""
    harmless: bool = False
    # The prefix of the process that printed it (``(TaskRunner pid=1)``, ``[rank3]:``), or "".
    process: str = ""
    # The rank, host and process that failed, where the log says them
    # (tui.parsers.failed_where).
    where: Where = field(default_factory=Where)
    # The marker line was the first of this many printed alike but for their numbers (a
    # device assert's one line per CUDA thread), all in this block.
    repeats: int = 1
    # A launcher's summary of a worker's failure (torchrun's ChildFailedError box): where it
    # says the failure began fills in what the worker's own lines leave out.
    summary: bool = False


@dataclass(frozen=True, slots=True)
class PhaseRecord:
    """A line that says which phase of a step the run began (:mod:`tui.parsers.stall_evidence`):
    validation, a checkpoint save, a request to a server retried. ``text``: the line, cleaned;
    ``source``: who printed it where several engines report alike (the process prefix and
    vLLM's engine index), so that one rollout engine gone idle does not end another's work;
    ``timer``: the slime timer the line started or ended, so that its end ends no other one."""

    kind: str
    text: str
    offset: int
    source: str = ""
    timer: str = ""


@dataclass(frozen=True, slots=True)
class SampleMarkRecord:
    """Where a printed ``[prompt]`` sample block starts; parsed on demand."""

    offset: int


@dataclass(frozen=True, slots=True)
class RunEndRecord:
    """A line that only a finished run prints (``Final validation metrics``, wandb's summary).

    ``by_logger``: printed by a logger on the way out (wandb's summary), which it
    prints on any exit, a crash too: it says the run ended, never that a failure
    after it came once the training was over.
    """

    offset: int
    by_logger: bool = False


@dataclass(frozen=True, slots=True)
class Sample:
    """A reward manager's printed sample: ``[prompt]`` … ``[score]`` blocks."""

    prompt: str
    response: str = ""
    ground_truth: str = ""
    score: float | None = None
    extra: dict[str, str] = field(default_factory=dict)
    offset: int = 0


class JobOutcome(str, Enum):
    """A scheduler's job state, in the words every scheduler shares.

    Each scheduler's parser maps its own states here (Ray: PENDING, RUNNING,
    SUCCEEDED, FAILED, STOPPED; Slurm: PENDING, RUNNING, COMPLETED, FAILED,
    TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, CANCELLED…) and keeps its own word in
    ``JobRecord.state`` for the user to read.
    """

    PENDING = "pending"      # queued, not started
    RUNNING = "running"
    SUCCEEDED = "succeeded"  # ended with exit status 0
    FAILED = "failed"        # ended on an error, a time limit, a node or memory failure
    STOPPED = "stopped"      # stopped or cancelled by someone


@dataclass(frozen=True, slots=True)
class JobRecord:
    """What the scheduler that runs the log (Ray's Jobs API, Slurm) says of its job.

    The log tells how training went; the scheduler tells whether the job is
    still there: a run killed for its time limit or a lost node often prints
    nothing at all. ``message`` is the scheduler's own reason (Ray's
    ``message``, Slurm's ``Reason``/exit code); ``note`` says where the state
    was read when that matters (``sacct``, or ``scontrol`` with accounting off).
    Times are epoch seconds on this machine's clock.
    """

    scheduler: str               # "Ray", "Slurm": how the UI names it
    job_id: str
    state: str                   # the scheduler's own word: FAILED, TIMEOUT, OUT_OF_MEMORY…
    outcome: JobOutcome
    message: str = ""
    nodes: tuple[str, ...] = ()
    time_limit_s: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    note: str = ""

    @property
    def ended(self) -> bool:
        """The job is over, whichever way."""
        return self.outcome in (JobOutcome.SUCCEEDED, JobOutcome.FAILED, JobOutcome.STOPPED)

    def time_left_s(self, now: float) -> float | None:
        """Seconds until the scheduler's time limit ends the running job (negative: past
        it); None without a limit, before it starts and after it ends."""
        if self.time_limit_s is None or self.started_at is None or self.ended:
            return None
        return self.started_at + self.time_limit_s - now


Record = (StepRecord | ProgressRecord | TotalStepsRecord | IncidentRecord | CrashBlock
          | SampleMarkRecord | RunEndRecord | JobRecord | PhaseRecord)
