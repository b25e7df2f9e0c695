"""Where a stalled run stopped: the phase of its step, the line that says so, and how long
that phase took before.

"No new step for 47 min" is where every hang report starts; the next question is stuck
*where*. The run has often said it: the lines since its last step (a validation that began
and did not end, a checkpoint save begun, a request to a reward server retried: see
:mod:`tui.parsers.stall_evidence`), its printed schedule (the step under way is a multiple of
``trainer.save_freq`` or ``trainer.test_freq``) and what the same phase took at earlier steps
(verl's ``timing_s/save_checkpoint``, ``timing_s/testing``). Without a line that names a
phase the answer is "unknown": a step that is due to save may as well be stuck in its
rollout, and a guess sends the user to the wrong place.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from tui.durations import word_duration
from tui.model.run_model import RunModel
from tui.parsers.records import PhaseRecord
from tui.parsers.stall_evidence import (
    CHECKPOINT,
    ENDED,
    PHASE_WORDS,
    ROLLOUT,
    ROLLOUT_ENDED,
    TIMER_ENDED,
    TRAINING,
    VALIDATION,
    WEIGHT_SYNC,
    WEIGHT_SYNC_ENDED,
)

# The step-metric keys that time each phase at the steps that ran it (verl's ``marked_timer``;
# slime's ``perf N: {'perf/train_time': …}``, its ``train`` timer, printed in the same step:
# its other timers' times come with the next step's, after the step they timed).
PHASE_TIMING = {
    CHECKPOINT: ("timing_s/save_checkpoint", "timing/save_checkpoint"),
    VALIDATION: ("timing_s/testing", "timing/testing"),
    ROLLOUT: ("timing_s/gen", "timing/gen"),
    TRAINING: ("perf/train_time",),
}
# The printed settings that schedule a phase every N steps: the phase, the key, what the step does.
SCHEDULES = ((CHECKPOINT, "trainer.save_freq", "saves a checkpoint"),
             (VALIDATION, "trainer.test_freq", "validates"))
# How a phase's time is named: "the last save took 4 min", "a step takes 1 min, a save 6 min".
PHASE_NOUNS = {CHECKPOINT: "save", VALIDATION: "validation", ROLLOUT: "generation", TRAINING: "training"}
# A quoted line is cut to this many characters in a finding.
_QUOTED_CHARS = 120


@dataclass(frozen=True, slots=True)
class PhaseTime:
    """What a phase took at the earlier steps that ran it: the latest and the slowest."""

    key: str
    last_s: float
    last_step: int
    slowest_s: float

    def words(self, noun: str) -> str:
        """``the last save took 4 min (timing_s/save_checkpoint, step 50; the slowest 6 min)``."""
        slowest = f"; the slowest {word_duration(self.slowest_s)}" if self.slowest_s > self.last_s else ""
        return (f"the last {noun} took {word_duration(self.last_s)} "
                f"({self.key} at step {self.last_step}{slowest})")


@dataclass(frozen=True, slots=True)
class Schedule:
    """A phase the printed config runs every ``every`` steps (``key``), and the step under way."""

    kind: str
    key: str
    every: int
    step: int
    does: str  # "saves a checkpoint"

    @property
    def due(self) -> bool:
        """Whether the step under way runs the phase."""
        return self.step % self.every == 0

    def words(self) -> str:
        """``step 8 saves a checkpoint (trainer.save_freq=4)``, or ``step 9 is not a save step (…)``."""
        said = self.does if self.due else f"is not a {PHASE_NOUNS[self.kind]} step"
        return f"step {self.step} {said} ({self.key}={self.every})"


@dataclass(frozen=True, slots=True)
class StallPhase:
    """Where a stalled step stands. ``phase`` is a kind of :mod:`tui.parsers.stall_evidence`
    (None: unknown); ``line``/``offset`` the line that says so; ``scheduled`` what the
    printed config says the step does (``step 100 saves a checkpoint (trainer.save_freq=50)``);
    ``before`` what the phase took at earlier steps; ``ended``: the last phase line said the
    phase before it ended (the phase is unknown, the line is quoted)."""

    phase: str | None
    line: str = ""
    offset: int | None = None
    scheduled: tuple[str, ...] = ()
    before: PhaseTime | None = None
    ended: bool = False

    def words(self) -> str:
        """The phase as the finding's first clause says it: ``saving a checkpoint`` or ``where: unknown``."""
        return PHASE_WORDS[self.phase] if self.phase is not None else "where: unknown"

    def evidence(self, quiet_s: float) -> str:
        """Why: the line (with its byte), the schedule, and the phase's earlier times."""
        parts = []
        if self.phase is not None and self.offset is not None:
            parts.append(f"last phase line `{_quoted(self.line)}` (at byte {self.offset:,})")
        elif self.ended and self.offset is not None:
            parts.append(f"the last phase line says its phase ended: `{_quoted(self.line)}` "
                         f"(at byte {self.offset:,})")
        else:
            parts.append("no line since the last step names a phase")
        parts += list(self.scheduled)
        if self.before is not None and self.phase is not None:
            parts.append(f"{self.before.words(PHASE_NOUNS[self.phase])}; "
                         f"this step has waited {word_duration(quiet_s)}")
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class Allowance:
    """The time the step under way may take beyond a typical step: the slowest time seen of
    each slow phase it runs (by the schedule or by a line), and how a reader is told so."""

    seconds: float
    words: str  # "a save 6 min", "a validation 3 min, a save 6 min"


def phase_allowance(model: RunModel) -> Allowance | None:
    """What the step under way's slow phases took at their slowest (None: it runs none that
    an earlier step timed). A run whose saves take 6 min is not stalled 5 min into one."""
    due = {kind for kind, _ in _scheduled(model)} | {p.kind for p in model.phases_since_last_step()}
    timed = [(kind, time) for kind, _, _ in SCHEDULES
             if kind in due and (time := phase_time(model, kind)) is not None]
    if not timed:
        return None
    return Allowance(sum(time.slowest_s for _, time in timed),
                     ", ".join(f"a {PHASE_NOUNS[kind]} {word_duration(time.slowest_s)}" for kind, time in timed))


def stall_phase(model: RunModel) -> StallPhase:
    """Where the step after ``model``'s last one stands, from the evidence the log holds."""
    scheduled = tuple(words for _, words in _scheduled(model))
    phases = model.phases_since_last_step()
    if not phases:
        return StallPhase(None, scheduled=scheduled)
    latest = phases[-1]
    if latest.kind in ENDED:
        under_way = _UNDER_WAY.get(latest.kind)
        busy = _still_under_way(phases, under_way) if under_way is not None else None
        if busy is None:
            return StallPhase(None, latest.text, latest.offset, scheduled, ended=True)
        latest = busy
    return StallPhase(latest.kind, latest.text, latest.offset, scheduled, phase_time(model, latest.kind))


def _engine(phase: PhaseRecord) -> str | None:
    """The rollout engine a rollout line speaks for (None: not an engine's rollout line)."""
    return phase.source if phase.kind in (ROLLOUT, ROLLOUT_ENDED) and not phase.timer else None


def _loading_rank(phase: PhaseRecord) -> str | None:
    """The engine's rank a weight-loading line speaks for (None: not an engine's such line)."""
    return phase.source if phase.kind in (WEIGHT_SYNC, WEIGHT_SYNC_ENDED) and not phase.timer else None


def _timer(phase: PhaseRecord) -> str | None:
    """The slime timer a line started or ended (None: not a timer's line)."""
    return phase.timer or None


# What an end leaves under way: each rollout engine's own last word (with several engines,
# verl's data-parallel rollout replicas, the ones done say so while a stuck one is silent, its
# last line still a running request); each SGLang rank's loading of its weights (the ranks
# that have loaded say so while one stuck loading its shard is silent); each slime timer's
# (timers nest: ``train`` holds ``log_probs`` and ``actor_train``, and one of them ending
# leaves ``train`` under way).
_UNDER_WAY: dict[str, Callable[[PhaseRecord], str | None]] = {
    ROLLOUT_ENDED: _engine, WEIGHT_SYNC_ENDED: _loading_rank, TIMER_ENDED: _timer}


def _still_under_way(phases: list[PhaseRecord], who: Callable[[PhaseRecord], str | None]) -> PhaseRecord | None:
    """The latest line of those whose speaker (``who``: an engine, a timer) did not say
    afterwards that it ended."""
    last: dict[str, PhaseRecord] = {}
    for phase in phases:
        if (speaker := who(phase)) is not None:
            last[speaker] = phase
    busy = [phase for phase in last.values() if phase.kind not in ENDED]
    return max(busy, key=lambda phase: phase.offset) if busy else None


def phase_time(model: RunModel, phase: str) -> PhaseTime | None:
    """What ``phase`` took at the earlier steps that timed it (None: none did)."""
    for key in PHASE_TIMING.get(phase, ()):
        series = model.series.get(key)
        if series is None:
            continue
        timed = [(s, v) for s, v in zip(series.steps, series.values) if math.isfinite(v) and v >= 0]
        if timed:
            step, last = timed[-1]
            return PhaseTime(key, last, step, max(v for _, v in timed))
    return None


def schedules(model: RunModel) -> list[Schedule]:
    """Every phase the printed config schedules every N steps, each with whether the step
    under way (the one after the last) is due to run it."""
    if model.config is None or model.last_step is None:
        return []
    step = model.last_step + 1
    found = []
    for kind, key, does in SCHEDULES:
        every = _positive_int(model.config.values.get(key))
        if every is not None:
            found.append(Schedule(kind, key, every, step, does))
    return found


def _scheduled(model: RunModel) -> list[tuple[str, str]]:
    """The phases the printed config schedules at the step under way, each with how it is said."""
    return [(schedule.kind, schedule.words()) for schedule in schedules(model) if schedule.due]


def _positive_int(text: str | None) -> int | None:
    """A printed setting as a whole number above 0 (``-1``, ``null`` and junk: None)."""
    try:
        value = int(text.strip().strip("'\"")) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and value > 0 else None


def _quoted(line: str) -> str:
    """A log line short enough to quote in a finding."""
    return line if len(line) <= _QUOTED_CHARS else line[:_QUOTED_CHARS - 1] + "…"
