"""Why a run is stuck, item by item, each with where it was read: the "why is it stuck" view.

The stalled finding says it all in one sentence; a user about to kill a job wants to check
each part of it: how long since the last step against a step's time and the stall rule's
limit, where the step stands (the line that says so, or "unknown"), what the printed
schedule has the step do, what the same phase took before, what each accelerator has done
since, what the trainer's processes are doing, and the log's last lines. Each part is an
:class:`Evidence`: one plain sentence and its source, a log line at a byte offset, a printed
setting, a metric of earlier steps, an accelerator's readings or a process's ``/proc``
entry. The sentences come from the modules that judged them (:mod:`tui.rules.stall_phase`,
:mod:`tui.rules.device_activity`, :mod:`tui.rules.process_activity`), so the view and the
finding never disagree.

A source is anything with a ``kind`` and ``words()`` (:class:`EvidenceSource`): the view
shows the kind and the words, dimmed, and opens the log at a :class:`LogLine`'s byte. A new
kind of evidence is a frozen dataclass with those two members, and its items are added to
the list: the view needs no change.

Pure: the model, the readings, the clock and the log's last lines (read by the caller) in,
items out.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from tui.durations import word_duration
from tui.model.accelerators import AcceleratorHistory
from tui.model.aliases import STEP_TIME
from tui.model.run_model import RunModel
from tui.parsers.records import JobOutcome
from tui.rules.device_activity import DeviceActivity, device_activity, mix_meaning
from tui.rules.engine import stall_bounds, stall_limit, step_seconds
from tui.rules.process_activity import ProcessActivity, process_meaning, run_processes, unwritten_words
from tui.rules.eta import OVERDUE_MIN_S, overdue_s
from tui.rules.stall_phase import PHASE_NOUNS, Allowance, phase_allowance, phase_time, schedules, stall_phase

# Where the run stands, as the view's first line says it.
MOVING = "moving"
OVERDUE = "overdue"
STALLED = "stalled"
FINISHED = "finished"
QUEUED = "queued"
# How many of the log's last lines since the last step are items, and how much of each.
TAIL_LINES = 6
LINE_CHARS = 240


class EvidenceSource(Protocol):
    """Where an item was read. ``kind`` names the sort of source (shown before its words)."""

    @property
    def kind(self) -> str: ...

    def words(self) -> str:
        """The source itself, in a few words: ``grpo.log, byte 4,096``."""
        ...


@dataclass(frozen=True, slots=True)
class LogLine:
    """A line of the log at byte ``offset`` (``text``: the line, or empty where the item
    quotes it already)."""

    kind: ClassVar[str] = "log line"
    log: str
    offset: int
    text: str = ""

    def words(self) -> str:
        where = f"{_file_name(self.log)}, byte {self.offset:,}" if self.log else f"byte {self.offset:,}"
        return f"{where}: {_cut(self.text)}" if self.text else where


@dataclass(frozen=True, slots=True)
class LogSpan:
    """The log between two bytes (what was looked through and found to say nothing)."""

    kind: ClassVar[str] = "log"
    log: str
    start: int
    end: int

    def words(self) -> str:
        where = f"{_file_name(self.log)}, " if self.log else ""
        if self.end > self.start:
            return f"{where}bytes {self.start:,}–{self.end:,}"
        return f"{where}nothing after byte {self.start:,}"


@dataclass(frozen=True, slots=True)
class ConfigSetting:
    """A setting the run printed at its start."""

    kind: ClassVar[str] = "config"
    key: str
    value: str

    def words(self) -> str:
        return f"{self.key}={self.value}"


@dataclass(frozen=True, slots=True)
class StepTiming:
    """A metric of earlier steps: at ``step``, or over ``count`` steps from ``first`` to ``last``."""

    kind: ClassVar[str] = "earlier steps' timing"
    key: str
    first: int | None
    last: int | None
    count: int = 1

    def words(self) -> str:
        if self.count > 1:
            return f"{self.key}, median of {self.count} steps ({self.first}–{self.last})"
        return f"{self.key} at step {self.last}" if self.last is not None else self.key


@dataclass(frozen=True, slots=True)
class AcceleratorReading:
    """Readings of the devices ``devices`` (host, index) from ``first_at`` to ``last_at``."""

    kind: ClassVar[str] = "accelerator reading"
    devices: tuple[tuple[str, int], ...]
    readings: int
    first_at: float
    last_at: float
    now: float

    def words(self) -> str:
        named = ", ".join(f"{host} GPU {index}" if host else f"GPU {index}" for host, index in self.devices)
        return (f"{named}: {self.readings} readings over {word_duration(self.last_at - self.first_at)}, "
                f"the last {word_duration(max(0.0, self.now - self.last_at))} ago")


@dataclass(frozen=True, slots=True)
class ProcessEntry:
    """The box's own record of processes ``pids`` on ``host``: ``/proc/PID/stat`` (state and
    CPU ticks, read twice for the CPU share) and ``/proc/PID/wchan``; ``origin`` says where
    the pid was found (the log's process prefix, an accelerator tool's process list)."""

    kind: ClassVar[str] = "process"
    host: str
    pids: tuple[int, ...]
    origin: str

    def words(self) -> str:
        where = f" on {self.host}" if self.host else ""
        if not self.pids:  # looked for by who writes the log, and none found
            return f"/proc/*/fd{where}: every open file of the account's processes; {self.origin}"
        files = ", ".join(f"/proc/{pid}/stat" for pid in self.pids)
        return f"{files}{where}; the pid{'s' if len(self.pids) > 1 else ''} from {self.origin}"


@dataclass(frozen=True, slots=True)
class Evidence:
    """One thing the view says (``says``, a plain sentence) and where it was read."""

    says: str
    source: EvidenceSource


@dataclass(frozen=True, slots=True)
class StallExplanation:
    """Where the run stands (``state``, ``headline``) and, when it is overdue or stalled,
    why, item by item, in the order a reader checks them."""

    state: str
    headline: str
    items: tuple[Evidence, ...] = ()


def explain_stall(model: RunModel, now: float, *, limits: Mapping[str, float] | None,
                  accelerators: AcceleratorHistory | None = None,
                  tail: Sequence[tuple[int, str]] = ()) -> StallExplanation:
    """Why the run after ``model``'s last step has not printed another, as of ``now``.

    ``limits`` are the stalled rule's parameters (None: the rule is off; the run is then only
    ever overdue); ``tail`` the log's lines since the last step, (byte offset, text), oldest
    first."""
    step, since = model.last_step, model.last_step_at
    if model.finished:
        return StallExplanation(FINISHED, "the run finished: it waits for no step")
    job = model.job
    if job is not None and (job.ended or job.outcome == JobOutcome.PENDING):
        # The scheduler knows better, as the stall rule holds: the job is over, or not started.
        said = "is over" if job.ended else "has not started"
        return StallExplanation(FINISHED if job.ended else QUEUED,
                                f"{job.scheduler} says the job {said} ({job.state}): it waits for no step")
    if step is None or since is None:
        return _before_first_step(model, now, limits, tail)
    quiet = now - since
    typical = step_seconds(model)
    allowance = phase_allowance(model)
    silence, state = _silence(model, step, now, quiet, typical, allowance, limits)
    if state == MOVING:
        return StallExplanation(MOVING, f"the run is moving: step {step} came {word_duration(quiet)} ago")
    headline = (f"stalled: no new step for {word_duration(quiet)} after step {step}" if state == STALLED
                else f"overdue, not stalled yet: no new step for {word_duration(quiet)} after step {step}")
    items = [silence, *_where(model, step, quiet), *_devices(accelerators, since, now), *_processes(model)]
    quoted = {item.source.offset for item in items if isinstance(item.source, LogLine)}
    return StallExplanation(state, headline, tuple(items + _tail(model, tail, quoted)))


def _silence(model: RunModel, step: int, now: float, quiet: float, typical: float | None, allowance: Allowance | None,
             limits: Mapping[str, float] | None) -> tuple[Evidence, str]:
    """How long since step ``step`` against a step's time and the stall limit, and what that
    makes the run: MOVING, OVERDUE or STALLED."""
    series, key = model.series_for(STEP_TIME)
    if typical is None:
        quiet_limit = limits["quiet_seconds"] if limits is not None else None
        state = (STALLED if quiet_limit is not None and quiet > quiet_limit
                 else OVERDUE if quiet > OVERDUE_MIN_S else MOVING)
        by_rule = (f"; the log gives no step time: stalled after {word_duration(quiet_limit)} of silence "
                   "(quiet_seconds)" if quiet_limit is not None else "")
        return Evidence(f"no new step for {word_duration(quiet)} after step {step}{by_rule}",
                        _since_last_step(model)), state
    # Overdue as the header says it (against the newest step time), so the two agree.
    overdue = overdue_s(model.last_step_at, model.sec_per_it, now, allowance)
    said = f"no new step for {word_duration(quiet)} after step {step}; a step takes {word_duration(typical)}"
    state = OVERDUE if overdue is not None else MOVING
    if limits is not None:
        limit, reason = _limit(limits, typical, allowance)
        if quiet > limit:
            state, said = STALLED, f"{said}; stalled past {word_duration(limit)}: {reason}"
        else:
            said = f"{said}; stalled only past {word_duration(limit)}: {reason}"
    if series is not None and key is not None and len(series):
        steps = series.steps
        source: EvidenceSource = StepTiming(key, steps[0], steps[-1], len(steps))
    else:
        source = StepTiming("tqdm s/it", None, step)
    return Evidence(said, source), state


def _limit(limits: Mapping[str, float], typical: float, allowance: Allowance | None) -> tuple[float, str]:
    """The stall rule's limit for the step under way (:func:`tui.rules.engine.stall_limit`),
    and which of its bounds set it."""
    phase_s = allowance.seconds if allowance is not None else 0.0
    limit = stall_limit(limits, typical, phase_s)
    by_steps, by_phase = stall_bounds(limits, typical, phase_s)
    if limit < max(by_steps, by_phase):
        return limit, f"the rule's ceiling (max_seconds={limits['max_seconds']:g})"
    if limit > max(by_steps, by_phase):
        return limit, (f"the rule's floor (min_seconds={limits['min_seconds']:g}); "
                       f"{limits['factor']:g} typical steps are {word_duration(by_steps)}")
    if allowance is not None and by_phase > by_steps:
        return limit, f"a step plus {limits['phase_factor']:g}× the slowest of its slow phases ({allowance.words})"
    return limit, f"{limits['factor']:g} typical steps (factor)"


def _where(model: RunModel, step: int, quiet: float) -> list[Evidence]:
    """The phase and the line that names it (or unknown), the schedule, and what the phases
    the step runs took at earlier steps."""
    phase = stall_phase(model)
    items = []
    if phase.phase is not None and phase.offset is not None:
        items.append(Evidence(f"where: {phase.words()}, by the last line since step {step} that names a phase",
                              LogLine(model.log, phase.offset, phase.line)))
    else:
        items.append(Evidence(f"{phase.words()}: no line since step {step} names a phase",
                              _since_last_step(model)))
    due = [phase.phase] if phase.phase is not None else []
    for schedule in schedules(model):
        items.append(Evidence(schedule.words(), ConfigSetting(schedule.key, str(schedule.every))))
        if schedule.due and schedule.kind not in due:
            due.append(schedule.kind)
    for kind in due:
        time = phase_time(model, kind) if kind in PHASE_NOUNS else None
        if time is not None:
            items.append(Evidence(f"{time.words(PHASE_NOUNS[kind])}; this step has waited {word_duration(quiet)}",
                                  StepTiming(time.key, None, time.last_step)))
    return items


def _devices(accelerators: AcceleratorHistory | None, since: float, now: float) -> list[Evidence]:
    """Each device's activity since the last step, then what they mean together."""
    if accelerators is None:
        return []
    activities = device_activity(accelerators, since)
    items = [Evidence(activity.words(), _readings((activity,), now)) for activity in activities]
    meaning = mix_meaning(activities) if activities else None
    if meaning is not None:
        items.append(Evidence(meaning, _readings(activities, now)))
    return items


def _processes(model: RunModel) -> list[Evidence]:
    """Each process of the run as read since the last step, then what their states mean."""
    activities = run_processes(model)
    unwritten = unwritten_words(model) if not activities else None
    if unwritten is not None and model.processes.writers is not None:
        said = unwritten.removeprefix("processes: ")
        return [Evidence(said[:1].upper() + said[1:],
                         ProcessEntry(model.processes.writers.host, (), "none of them is the log, opened to write"))]
    items = [Evidence(activity.words(), _entry((activity,))) for activity in activities]
    meaning = process_meaning(activities)
    if meaning is not None:
        items.append(Evidence(meaning, _entry(activities)))
    return items


def _entry(activities: Sequence[ProcessActivity]) -> ProcessEntry:
    hosts = sorted({activity.host for activity in activities})
    origins = sorted({activity.origin for activity in activities})
    return ProcessEntry(", ".join(hosts), tuple(activity.pid for activity in activities), "; ".join(origins))


def _readings(activities: Sequence[DeviceActivity], now: float) -> AcceleratorReading:
    return AcceleratorReading(tuple((a.host, a.index) for a in activities), sum(a.readings for a in activities),
                              min(a.first_at for a in activities), max(a.last_at for a in activities), now)


def _tail(model: RunModel, tail: Sequence[tuple[int, str]], quoted: Collection[int] = ()) -> list[Evidence]:
    """The log's last few non-blank lines since the last step, as it printed them, but for
    those an item quotes already (``quoted``: their offsets; the phase line is often the last)."""
    lines = [(offset, text) for offset, text in tail if text.strip() and offset not in quoted][-TAIL_LINES:]
    return [Evidence(_cut(text), LogLine(model.log, offset)) for offset, text in lines]


def _before_first_step(model: RunModel, now: float, limits: Mapping[str, float] | None,
                       tail: Sequence[tuple[int, str]]) -> StallExplanation:
    """A run with no step yet: how long the log has been silent against the rule's
    ``quiet_seconds``, and its last lines."""
    if model.last_write_at is None:
        return StallExplanation(MOVING, "no step yet and nothing read from the log")
    quiet = now - model.last_write_at
    quiet_limit = limits["quiet_seconds"] if limits is not None else None
    if quiet_limit is None or quiet <= quiet_limit:
        return StallExplanation(MOVING, f"no step yet; the log was written {word_duration(quiet)} ago")
    said = (f"no step yet and nothing written for {word_duration(quiet)}: stalled after "
            f"{word_duration(quiet_limit)} of silence (quiet_seconds)")
    items = [Evidence(said, LogSpan(model.log, 0, model.read_to)), *_processes(model), *_tail(model, tail)]
    return StallExplanation(STALLED, f"stalled before its first step: nothing written for {word_duration(quiet)}",
                            tuple(items))


def _since_last_step(model: RunModel) -> LogSpan:
    """The log read since the last step line."""
    start = max(0, model.last_step_line_end)
    return LogSpan(model.log, start, max(start, model.read_to))


def _file_name(log: str) -> str:
    """The log's file name (its label is a whole local path, or ``host:path``): the rest is
    in the title of every screen."""
    return log.rsplit("/", 1)[-1]


def _cut(text: str) -> str:
    """A line short enough for one item."""
    return text if len(text) <= LINE_CHARS else text[:LINE_CHARS - 1] + "…"
