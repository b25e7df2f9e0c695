"""Did the run crash? The failures of a log judged against where its steps stopped.

A traceback is not a crash by itself: reward functions print handled ones
for every sample they cannot score, and Ray tears workers down noisily after
a finished run. What makes a crash is a failure the run did not go on after:

* **crashed** — failure blocks after the last step line, and the run had not
  printed its own end before them. The cause named is the first block that
  says why a process died (out of memory, a collective timeout, a signal, a
  kill), else the first block that ends on an exception line, else the
  first: later ones are usually other ranks and the driver reporting the
  same death.
* **survived** — a failure with steps after it (the run went on), after the
  run printed its own end (teardown), or one that says nothing fatal on its
  own (the raylet's "A worker died or was killed", printed for restarted
  workers too).
* the driver's own failure — Hydra's ``Error executing job``, or an unprefixed
  block in a run whose steps come from a Ray actor — ends the run even where
  a step or two follow it: Ray forwards its actors' output asynchronously,
  so the last step lines and verl's final print often land after the
  driver's traceback;
* a traceback or Ray task error after the last step that the log goes on past
  for more than ``WENT_ON_BYTES`` of ordinary output was lived through: the
  process that printed it was still printing (a reward function's handled
  error, a server's logged request error); whether the run is hung is then the
  stall rule's call;
* a failure after the last step whose exception the run has already gone on
  after twice or more (a reward function that raises every few samples) is
  taken as one more of those while the log grows; a hung run is caught by
  the stall rule;
* a supervisor's report that the process printing the steps died ends the run:
  Ray's raylet says ``A worker died or was killed … Worker PID: N`` of any
  worker it loses (survivable, it restarts them), but where N is the pid in the
  ``(TaskRunner pid=N)`` prefix of the step lines, the trainer itself is gone.

The crash names where it happened when the log says it (the rank, local rank,
host, pid: :mod:`tui.parsers.failed_where`); torchrun's box fills in what the
failing rank's own lines leave out. Its "also" list folds failure lines that
differ only in their numbers (a device assert's line per thread) into one, with a
count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui.model.failures import Failure
from tui.model.run_model import RunModel
from tui.parsers.crash_block import exception_name, shape
from tui.parsers.failed_where import merge
from tui.parsers.incidents import (
    ACTOR_DIED,
    CAUSE_ORDER,
    COLLECTIVE_TIMEOUT,
    EXITED,
    HYDRA_ERROR,
    RAY_ERROR,
    ROOT_CAUSES,
    TRACEBACK,
    weak,
)
from tui.parsers.records import Where

# How often an exception must have been survived before a new one after the
# last step is presumed survived too.
RECURRING = 2
# How many step lines Ray may still forward after the driver has died.
LATE_STEPS = 2
# A process that kept printing this much after a traceback lived through it: a crash's
# tail (other ranks' copies, Ray's teardown, wandb's summary, a job's re-printed last
# logs) is a few tens of KiB at most, while verbose reward functions print that in seconds.
WENT_ON_BYTES = 128 * 1024
# Failures that say only that an exception was raised, not that a process died.
_GENERIC = (TRACEBACK, RAY_ERROR)


@dataclass(frozen=True, slots=True)
class Failures:
    """A run's failures sorted by what they mean for the verdict."""

    # The failure that ended the run, and every failure after the last step.
    cause: Failure | None
    fatal: tuple[Failure, ...]
    # Failures the run went on after (steps followed) or printed after its own end.
    survived: tuple[Failure, ...]
    after_end: tuple[Failure, ...]
    # Failures after the last step that say nothing fatal on their own.
    weak: tuple[Failure, ...] = ()
    # The cause's exception had been survived this many times before.
    recurring: int = 0
    # Where the cause happened (rank, host, pid), where the log says it.
    where: Where = Where()


def judge_failures(model: RunModel, kinds: frozenset[str] | None = None) -> Failures:
    """Sort ``model``'s failures (of ``kinds``, or all) into fatal, survived and after the end."""
    failures = [f for f in model.failures()
                if not f.harmless and (kinds is None or f.kind in kinds)]
    last_step_end = model.last_step_line_end
    end = model.end_marker_offset
    fatal: list[Failure] = []
    survived: list[Failure] = []
    after_end: list[Failure] = []
    faint: list[Failure] = []
    for failure in failures:
        if end is not None and failure.offset > end:
            after_end.append(failure)
        elif failure.offset >= last_step_end or _ended_the_driver(model, failure):
            (faint if weak(failure.text) and not _trainer_died(model, failure) else fatal).append(failure)
        else:
            survived.append(failure)
    if fatal and all(f.kind in _GENERIC and not _ended_the_driver(model, f) for f in fatal):
        last_end = max(f.block.end if f.block is not None else f.offset + 1 for f in fatal)
        if model.read_to - last_end > WENT_ON_BYTES:
            survived, fatal = survived + fatal, []
    if not fatal:
        return Failures(None, (), tuple(survived + faint), tuple(after_end))
    # The first block that says why a process died, else the first; one that ends
    # on an exception line before one that does not (a Hydra header whose traceback
    # Ray's forwarded lines cut off says less than the traceback after them).
    roots = [f for f in fatal if f.kind in ROOT_CAUSES]
    cause = min(roots or fatal, key=lambda f: (
        CAUSE_ORDER.index(f.kind) if roots else 0, not _names_an_exception(f)))
    # The same failure's first sign, a step or two before the end: NCCL's watchdog fires, the
    # rank prints the step it was in, then the process is taken down; or another rank than
    # the one printing the steps dies of an exception while the step it had no part in is
    # still being printed (srun and torchrun interleave the ranks' streams). Not survived:
    # the first of them is where the run's end began.
    first_signs = [f for f in survived if model.step_lines_after(f.offset) <= LATE_STEPS and (
        f.kind == cause.kind and f.kind in ROOT_CAUSES
        and (_same_rank(f, cause) or f.kind == COLLECTIVE_TIMEOUT)
        or _other_rank_died(model, f))]
    if first_signs:
        survived = [f for f in survived if f not in first_signs]
        fatal = first_signs + fatal
        if not roots or first_signs[0].kind in ROOT_CAUSES:
            cause = first_signs[0] if _names_an_exception(first_signs[0]) else cause
    name = exception_name(cause.text)
    recurring = sum(1 for f in survived if exception_name(f.text) == name)
    if cause.kind not in (TRACEBACK, RAY_ERROR) or recurring < RECURRING:
        recurring = 0
    return Failures(cause, tuple(fatal), tuple(survived), tuple(after_end), weak=tuple(faint),
                    recurring=recurring, where=_where(cause, fatal))


def _where(cause: Failure, fatal: list[Failure]) -> Where:
    """Where the cause happened: what its own block says, with what a launcher's report of
    the same failure adds (torchrun's root cause names the host and local rank that a
    ``[rank1]:`` traceback leaves out, srun's ``task 1: Exited`` the node) where the two do
    not disagree on the rank."""
    where = cause.block.where if cause.block is not None else Where()
    for failure in fatal:
        said = failure.block.where if failure.block is not None else Where()
        if failure is not cause and said and (where.rank is None or said.rank in (None, where.rank)) \
                and failure.block is not None and (failure.block.summary or failure.kind == EXITED):
            where = merge(where, said)
    return where


def also_lines(judged: Failures, shown: int, chars: int) -> list[str]:
    """The fatal failure lines besides the cause, at most ``shown``, each cut to ``chars``:
    each line once, and lines that differ only in their numbers (a device assert's line per
    CUDA thread, one copy per rank) folded into their first, with how many there were."""
    assert judged.cause is not None
    cause_shape = shape(judged.cause.text)
    counts: dict[str, tuple[str, int]] = {}
    for failure in judged.fatal + judged.weak:
        key = shape(failure.text)
        if key == cause_shape:
            continue
        repeats = failure.block.repeats if failure.block is not None else 1
        first, count = counts.get(key, (failure.text, 0))
        counts[key] = (first, count + repeats)
    return [text[:chars] + ("" if count == 1 else f" (×{count})")
            for text, count in list(counts.values())[:shown]]


# A rank's account of its collectives: ``[PG ID 0 PG GUID 0(default_pg) Rank 1] … Last
# enqueued NCCL work: 9``, ``[Rank 7] Timeout at NCCL work: 610, last enqueued NCCL work: 616``.
_ENQUEUED = re.compile(r"\bRank (\d+)\].*?[Ll]ast enqueued NCCL work: (\d+)")


def behind_rank(judged: Failures) -> str:
    """``rank 1 never reached the collective (last enqueued NCCL work 9, the others 10)``
    where the ranks' accounts of a collective timeout say one is behind; else "". The rank a
    timeout names is the one that waited; this is the one it waited for."""
    enqueued: dict[int, int] = {}
    for failure in judged.fatal:
        for rank, work in _ENQUEUED.findall(failure.text):
            enqueued[int(rank)] = int(work)
    if len(enqueued) < 2 or len(set(enqueued.values())) < 2:
        return ""
    lowest = min(enqueued.values())
    behind = sorted(rank for rank, work in enqueued.items() if work == lowest)
    others = max(enqueued.values())
    ranks = ", ".join(str(rank) for rank in behind)
    return (f"rank{'s' if len(behind) > 1 else ''} {ranks} never reached the collective "
            f"(last enqueued NCCL work {lowest}, the others {others})")


def _same_rank(one: Failure, other: Failure) -> bool:
    """Both blocks were read and name the same rank."""
    if one.block is None or other.block is None:
        return False
    return one.block.where.rank is not None and one.block.where.rank == other.block.where.rank


def _other_rank_died(model: RunModel, failure: Failure) -> bool:
    """A traceback a ``[rankN]:`` prefix gives to another process than the one whose lines
    carry the steps, read to its exception line: that rank's uncaught exception."""
    block = failure.block
    return (block is not None and _names_an_exception(failure) and block.process.startswith("[rank")
            and not model.steps_prefixed)


def _trainer_died(model: RunModel, failure: Failure) -> bool:
    """A supervisor reports the death of the process whose lines carry the steps (the raylet's
    ``Worker PID: N`` where the step lines say ``(TaskRunner pid=N)``)."""
    block = failure.block
    return (block is not None and failure.kind == ACTOR_DIED and block.where.pid is not None
            and block.where.pid == model.steps_pid)


def _ended_the_driver(model: RunModel, failure: Failure) -> bool:
    """The driver process failed (see the module docstring), and at most ``LATE_STEPS``
    step lines follow: what Ray was still forwarding, not a run that went on."""
    block = failure.block
    if block is None or block.harmless or model.step_lines_after(failure.offset) > LATE_STEPS:
        return False
    driver = block.process == "" and model.steps_prefixed and _names_an_exception(failure)
    # Hydra's header opens the block (its marker's kind), though the block is named by the
    # more telling kind its traceback shows (a Ray task error).
    return driver or failure.marker.kind == HYDRA_ERROR or _trainer_died(model, failure)


def _names_an_exception(failure: Failure) -> bool:
    """Its block was read and ends on a line that says what failed."""
    return failure.block is not None and failure.block.exception_offset is not None
