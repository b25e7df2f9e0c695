"""Evaluating the rules against a run model, incrementally, into grouped findings.

A week-long run reaches 100,000 steps; judging every series from the start on
every new step would cost seconds. Each (rule, metric) pair remembers how far
it has judged and only looks at new points, starting over when the series was
rewritten (a re-printed step) or replaced (the log was truncated).

Then each finding gets its level (docs/verdict.md). A rule is a warning or a
critical; a warning about a *condition* (``CONDITION_KINDS``: a metric outside
its band, a reward falling) is a note once the condition has cleared, and a
band's is a note once the run has sat outside it for long (``tui.rules.standing``):
a property of the run, said once with the step it began. A warning about an
*event* (a step 100× the others, a length surge, an error the run survived)
stands until the user mutes it. A rule that cannot apply to this run (its
printed config says so, or its metric is constant by construction) is not
judged, and a note says why.
"""

from __future__ import annotations

import fnmatch
import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from bisect import bisect_right
from dataclasses import dataclass
import statistics
from statistics import median

from tui.durations import word_duration
from tui.model.accelerators import AcceleratorHistory
from tui.model.aliases import STEP_TIME, live_key
from tui.model.run_model import RunModel
from tui.model.running_median import RunningMedian
from tui.model.series import Series
from tui.model.failures import Failure, bursts
from tui.parsers.incidents import KIND_WORDS
from tui.parsers.records import JobOutcome
from tui.rules.crash import also_lines, behind_rank, judge_failures
from tui.rules.findings import Finding, Severity
from tui.rules.point_checks import POINT_CHECKS, SUSPECTS
from tui.rules.rule_file import RuleSpec, Unless
from tui.rules.device_activity import activity_words, device_activity
from tui.rules.process_activity import process_words, run_processes, unwritten_words
from tui.rules.stall_phase import phase_allowance, stall_phase
from tui.rules.standing import Standing


# Rule kinds that judge a condition of the run now (it clears when the condition does);
# the others judge events, which stand until muted.
CONDITION_KINDS = frozenset({"band", "decline", "stuck", "relation"})
# A band the run has been outside of at this share of its judged points (or more), from
# the step it left it, over at least the rule's ``settle`` steps or from its first judged
# step on: a property of the run (a metric that lives at the band's edge is outside half
# the time; 033's grad norm is above 1.0 at 591 of its 1,104 steps).
STANDING_SHARE = 0.5
_LEVEL_ORDER = {Severity.CRITICAL: 0, Severity.WARNING: 1, Severity.NOTE: 2}

# Points of a series judged between looks at the clock (a budgeted judging of a
# 100,000-step run stops within a few milliseconds of its deadline).
_JUDGED_AT_ONCE = 4096


def matching_keys(patterns: Sequence[str], keys: Collection[str]) -> list[str]:
    """Keys that match any pattern (``*`` globs allowed), in pattern order, sorted within one."""
    found: list[str] = []
    for pattern in patterns:
        if any(c in pattern for c in "*?["):
            found += sorted(k for k in keys if fnmatch.fnmatchcase(k, pattern) and k not in found)
        elif pattern in keys and pattern not in found:
            found.append(pattern)
    return found


def first_key(patterns: Sequence[str], series: Mapping[str, Series], skip_zero: bool = False) -> str | None:
    """The concept's key in this run: the first alias (or glob match) present; with
    ``skip_zero``, the first whose series is not all zero (an unused alias, see ``live_key``)."""
    matches = matching_keys(patterns, series)
    if skip_zero:
        return live_key(matches, series)
    return matches[0] if matches else None


@dataclass(slots=True)
class _Progress:
    series: Series
    rewrites: int
    done: int
    finding: Finding | None


@dataclass(frozen=True, slots=True)
class _Judging:
    """What one evaluation judges against: the run, the time, when to stop, the devices."""

    model: RunModel
    now: float
    deadline: float | None  # time.monotonic() past which series judgement stops
    accelerators: AcceleratorHistory | None


# How a kind of rule is judged: (the engine, for what it keeps between calls; the rule;
# what is judged) → the rule's current findings.
Judge = Callable[["RuleEngine", RuleSpec, _Judging], list[Finding]]
# Every kind a rule file may name (``rule_file.KIND_PARAMS``), and its judge.
JUDGES: dict[str, Judge] = {}


def _judges(*kinds: str) -> Callable[[Judge], Judge]:
    """Register the decorated function as the judge of ``kinds``."""
    def register(judge: Judge) -> Judge:
        for kind in kinds:
            JUDGES[kind] = judge
        return judge
    return register


class RuleEngine:
    """Holds the enabled rules and what each has judged so far."""

    def __init__(self, rules: list[RuleSpec], muted: Mapping[str, int | None] | None = None) -> None:
        self.rules = [rule for rule in rules if rule.enabled]
        # Rules the user muted on this run (the dashboard's key), beside those muted in every
        # run (``RuleSpec.muted``): rule id → the step up to which its events are acknowledged
        # (None: all of them). A later event of the rule stands again; a condition stays muted.
        self.muted: dict[str, int | None] = dict(muted or {})
        self._progress: dict[tuple[str, str], _Progress] = {}
        # (rule, key) → (series, its rewrites, points checked, the value every one had; None
        # once two differed): a metric exactly 0 at every step (constant by construction: a
        # clip fraction of an on-policy update) is not judged against a band.
        self._constant: dict[tuple[str, str], tuple[Series, int, int, float | None]] = {}
        # (rule, key) → (the finding, since when its band has stood broken), kept up as steps come.
        self._standing: dict[tuple[str, str], tuple[Finding, Standing]] = {}
        # True when the last evaluate ran out of its time budget before judging
        # every point: call again (the work done so far is kept).
        self.behind = False
        # The step-time series' median, kept as it grows: a median of a million steps
        # worked out afresh costs 0.22 CPU-s, and a followed dashboard judges a few times a second.
        self._typical: RunningMedian | None = None

    def evaluate(self, model: RunModel, now: float, budget_s: float | None = None,
                 accelerators: AcceleratorHistory | None = None) -> list[Finding]:
        """All current findings, critical first, then by rule order.

        With ``budget_s``, series judgement stops once that much time has gone
        and ``behind`` says so: the dashboard judges a freshly loaded 100k-step
        run over several redraws instead of freezing for seconds.
        """
        deadline = None if budget_s is None else time.monotonic() + budget_s
        self.behind = False
        judging = _Judging(model, now, deadline, accelerators)
        findings = []
        for rule in self.rules:
            unless = _not_applicable(rule, model)
            judged = [_inapplicable(rule, *unless)] if unless else JUDGES[rule.kind](self, rule, judging)
            for finding in judged:
                # (a finding with no hit is a rule's note that it did not judge)
                if rule.kind in CONDITION_KINDS and rule.severity == Severity.WARNING and finding.count:
                    self._settle(rule, finding, model)
                finding.muted = rule.muted or self._acknowledged(rule, finding)
            findings += judged
        findings.sort(key=lambda f: _LEVEL_ORDER[f.severity])
        return findings

    def _acknowledged(self, rule: RuleSpec, finding: Finding) -> bool:
        """Whether the user muted ``finding`` on this run: its rule, and for an event, every
        hit up to the step it was muted at."""
        if rule.id not in self.muted:
            return False
        upto = self.muted[rule.id]
        return (upto is None or rule.kind in CONDITION_KINDS or finding.last_step is None
                or finding.last_step <= upto)

    def _settle(self, rule: RuleSpec, finding: Finding, model: RunModel) -> None:
        """A condition's warning, or a note: cleared since its last hit, or (a band) standing."""
        finding.severity, finding.note, finding.since = rule.severity, "", None
        key = finding.metric
        series = model.series.get(key) if key is not None else None
        if key is None or series is None or finding.last_step is None:
            return
        progress = self._progress.get((rule.id, key))
        judged = progress.done if progress is not None and progress.series is series else len(series)
        if judged == 0:
            return
        latest = series.steps[judged - 1]
        if finding.last_step < latest:
            cleared = series.steps[bisect_right(series.steps, finding.last_step, 0, judged)]
            finding.severity, finding.note = Severity.NOTE, f"cleared: no longer so from step {cleared}"
            return
        if rule.kind not in ("band", "relation"):
            return
        state = self._standing.get((rule.id, key))
        if state is None or state[0] is not finding or state[1].points > judged:
            state = (finding, Standing(STANDING_SHARE))
            self._standing[(rule.id, key)] = state
        standing = state[1]
        standing.catch_up(finding.steps, series.steps, judged)
        stood = standing.since()
        if stood is None:
            return
        since, hits, points, point = stood
        # Long enough, or from the rule's first judged point on (never inside the band: no change).
        if latest - since + 1 >= rule.params["settle"] or point <= rule.warmup:
            finding.severity, finding.since = Severity.NOTE, since
            finding.note = (f"true at {hits:,} of the {points:,} judged steps since step {since}: "
                            "a property of this run, not news")

    def constant_value(self, rule: RuleSpec, key: str, series: Series) -> float | None:
        """The value every point of ``series`` has (None: it varies, or has under two points)."""
        cached = self._constant.get((rule.id, key))
        if cached is None or cached[0] is not series or cached[1] != series.rewrites or cached[2] > len(series):
            cached = (series, series.rewrites, 0, series.values[0] if len(series) else None)
        _, rewrites, checked, value = cached
        if value is not None and any(v != value for v in series.values[checked:]):
            value = None
        self._constant[(rule.id, key)] = (series, rewrites, len(series), value)
        return value if len(series) > 1 else None

    def step_seconds_of(self, model: RunModel) -> float | None:
        """``step_seconds``, the median kept up to date as the step-time series grows."""
        series, _ = model.series_for(STEP_TIME)
        if series is None:
            return step_seconds(model)
        if self._typical is None or self._typical.series is not series:
            self._typical = RunningMedian(series)
        typical = self._typical.median()
        return typical if typical is not None else model.sec_per_it

    def judge_series(self, rule: RuleSpec, key: str, model: RunModel,
                     deadline: float | None) -> Finding | None:
        """The finding of a point check on one series, judging only the points not judged
        before (until ``deadline``; ``behind`` then says more is left)."""
        series = model.series[key]
        progress = self._progress.get((rule.id, key))
        if (progress is None or progress.series is not series or progress.rewrites != series.rewrites
                or progress.done > len(series)):
            progress = _Progress(series, series.rewrites, 0, None)
            self._progress[(rule.id, key)] = progress
        check, suspects = POINT_CHECKS[rule.kind], SUSPECTS[rule.kind]
        companions = [model.series.get(name) for name in rule.params.get("companions", [])]
        values, steps = series.values, series.steps
        # A stuck window must be stuck in its companions too, over the whole window.
        span = rule.params.get("steps", 1) if rule.kind == "stuck" else 1
        end = len(series)
        for start in range(max(progress.done, rule.warmup), end, _JUDGED_AT_ONCE):
            if deadline is not None and time.monotonic() > deadline:
                self.behind = True
                end = start
                break
            hits = [(i, reason) for i in suspects(values, start, min(start + _JUDGED_AT_ONCE, end),
                                                  rule.params)
                    if (reason := check(values, i, rule.params)) is not None
                    and (not companions or all(_companions_agree(companions, steps[j])
                                               for j in range(max(0, i + 1 - span), i + 1)))]
            if hits:
                last, reason = hits[-1]
                if progress.finding is None:
                    progress.finding = Finding(rule.id, rule.severity, key)
                progress.finding.add_hits([steps[i] for i, _ in hits], values[last],
                                          f"{key} = {values[last]:.4g} at step {steps[last]}: {reason}",
                                          reason)
        progress.done = max(progress.done, end)
        return progress.finding


def _not_applicable(rule: RuleSpec, model: RunModel) -> tuple[Unless, str] | None:
    """The first of the rule's ``unless`` settings the run's printed config has, and its value."""
    config = model.config
    if config is None:
        return None
    for unless in rule.unless:
        value = config.values.get(unless.config)
        if value is not None and value.strip().strip("'\"").lower() == unless.equals.lower():
            return unless, value
    return None


def _inapplicable(rule: RuleSpec, unless: Unless, value: str) -> Finding:
    """The note of a rule the run's config says cannot apply."""
    finding = Finding(rule.id, Severity.NOTE)
    finding.note = f"not judged: {unless.why} (the run's config: {unless.config}={value})"
    return finding


def _companions_agree(companions: Sequence[Series | None], step: int) -> bool:
    """A printed 0.000 is only zero if its companions (max/min) are zero too.

    Pre-v0.5 verl rounds to 3 decimals, so an advantage mean of 0.000 with a
    max of 0.8 is rounding, not a dead signal.
    """
    for series in companions:
        if series is not None and series.value_at(step) not in (0.0, None):
            return False
    return True


def _relation(rule: RuleSpec, model: RunModel) -> list[Finding]:
    """Train reward against validation score at each validation."""
    train_key = first_key(rule.metrics, model.series)
    val_key = first_key(rule.params["other"], model.series)
    if train_key is None or val_key is None:
        return []
    train, validation = model.series[train_key], model.series[val_key]
    finding = None
    for step, val in zip(validation.steps, validation.values):
        reward = _at_or_before(train, step)
        if reward is None or not (reward > 0 and math.isfinite(val)):
            continue
        gap = (reward - val) / reward
        if gap > rule.params["max_gap"]:
            finding = finding or Finding(rule.id, rule.severity, val_key)
            finding.add_hit(step, gap, f"train reward {reward:.4g} vs validation {val:.4g} at "
                                       f"step {step}: a {gap:.0%} gap", f"{gap:.0%} below train")
    return [finding] if finding else []


def _at_or_before(series: Series, step: int) -> float | None:
    """The series' value at ``step`` or the nearest earlier step."""
    value = series.value_at(step)
    if value is not None:
        return value
    earlier = [v for s, v in zip(series.steps, series.values) if s < step]
    return earlier[-1] if earlier else None


def step_seconds(model: RunModel) -> float | None:
    """The run's typical seconds per step: the median step-time metric, else tqdm's rate."""
    series, _ = model.series_for(STEP_TIME)
    finite = [v for v in series.values if math.isfinite(v) and v > 0] if series else []
    if finite:
        return median(finite)
    return model.sec_per_it


def _stalled(rule: RuleSpec, model: RunModel, now: float, typical: float | None,
             accelerators: AcceleratorHistory | None = None) -> list[Finding]:
    """No new step for ``factor`` × the median step time (``typical``), in a run that has not finished.

    A run with no step yet, or none whose time the log gives, is judged by the log's
    silence instead (``quiet_seconds``): most hangs come before the first step (a
    collective's init, a model loading, GPUs that never free up), and such a run was
    "running" forever. How long is worded by ``word_duration``: a short limit (a rule
    file's, a test's) gave "no new step for 0 min"."""
    if model.job is not None and (model.job.ended or model.job.outcome == JobOutcome.PENDING):
        return []  # the scheduler knows better: the job is over, or not started
    if model.finished:
        return []
    if model.last_step is None or typical is None:
        return _silent(rule, model, now, accelerators)
    last_seen = model.last_step_at
    if last_seen is None:
        return []
    quiet = now - last_seen
    allowance = phase_allowance(model)
    if quiet <= stall_limit(rule.params, typical, allowance.seconds if allowance else 0.0):
        return []
    finding = Finding(rule.id, rule.severity)
    finding.add_hit(model.last_step, quiet, f"no new step for {word_duration(quiet)} after step "
                    f"{model.last_step} (typical step {word_duration(typical)}), "
                    f"{_where(model, quiet, accelerators)}")
    return [finding]


def stall_limit(params: Mapping[str, float], typical: float, phase_s: float) -> float:
    """Seconds without a new step before a run is stalled: the longer of ``stall_bounds``;
    never under ``min_seconds`` nor over ``max_seconds``."""
    wanted = max(stall_bounds(params, typical, phase_s))
    return min(max(wanted, params["min_seconds"]), params["max_seconds"])


def stall_bounds(params: Mapping[str, float], typical: float, phase_s: float) -> tuple[float, float]:
    """The two lengths a stall limit is the longer of: ``factor`` typical steps, and a typical
    step plus ``phase_factor`` × the slowest time of the slow phases the step under way runs
    (``phase_s``)."""
    return params["factor"] * typical, typical + params["phase_factor"] * phase_s


def _where(model: RunModel, quiet: float, accelerators: AcceleratorHistory | None) -> str:
    """The stall's phase (the header shows up to the first ``;``), then why it is said, then
    what the devices have done since the last step (where they are read), then what the
    trainer's processes do (where they were read since)."""
    phase = stall_phase(model)
    said = f"{phase.words()}; the run may be hung or dead; {phase.evidence(quiet)}"
    since = model.last_step_at
    if accelerators is not None and since is not None:
        devices = activity_words(device_activity(accelerators, since), f"since step {model.last_step}")
        if devices is not None:
            said += f"; {devices}"
    return said + _processes(model)


def _processes(model: RunModel) -> str:
    """``; processes: …`` for the processes read since the last step (or write), or that
    nothing writes the log any more, or ""."""
    said = process_words(run_processes(model)) or unwritten_words(model)
    return f"; {said}" if said is not None else ""


def _silent(rule: RuleSpec, model: RunModel, now: float,
            accelerators: AcceleratorHistory | None) -> list[Finding]:
    """The stall of a run whose step time is unknown: nothing written for ``quiet_seconds``."""
    if model.last_write_at is None:
        return []
    quiet = now - model.last_write_at
    if quiet <= rule.params["quiet_seconds"]:
        return []
    finding = Finding(rule.id, rule.severity)
    if model.last_step is None:
        finding.add_hit(None, quiet, f"no step yet and nothing written for {word_duration(quiet)}; "
                        "the run may be hung while starting (a collective's init, a model loading, "
                        "GPUs that never free up) or dead" + _processes(model))
    else:
        finding.add_hit(model.last_step, quiet, f"nothing written for {word_duration(quiet)} after step "
                        f"{model.last_step}, {_where(model, quiet, accelerators)}")
    return [finding]


# How many of a crash's other failure lines its message names, and how much of each.
ALSO_SHOWN = 3
ALSO_CHARS = 160


def _incidents(rule: RuleSpec, model: RunModel) -> list[Finding]:
    """The crash a run did not go on after (``crash``), or the errors it did (``survived``)."""
    judged = judge_failures(model, frozenset(rule.params["kinds"]))
    if rule.params["survived"]:
        findings = []
        if judged.survived:
            findings.append(_grouped(rule, judged.survived, "the run went on"))
        if judged.after_end:
            # Printed after the run's own end (Ray tearing its workers down): the run's work
            # was done; said, not counted.
            teardown = _grouped(rule, judged.after_end, "after the run printed its end")
            teardown.severity, teardown.note = Severity.NOTE, "after the run's end: its teardown, not its work"
            findings.append(teardown)
        return findings
    cause = judged.cause
    if cause is None:
        return []
    after = "before the first step" if cause.step is None else f"after step {cause.step}"
    where = f"{judged.where.words()}, " if judged.where else ""
    message = f"{KIND_WORDS[cause.kind]}: {cause.text} ({where}{after}, at byte {cause.offset:,})"
    if cause.block is not None and cause.block.cause:
        message += f"; cause: {cause.block.cause}"
    if behind := behind_rank(judged):
        message += f"; {behind}"
    others = also_lines(judged, ALSO_SHOWN, ALSO_CHARS)
    if others:
        message += "; also: " + "; ".join(others)
    severity = rule.severity
    if judged.recurring:
        severity = Severity.WARNING
        message += (f"; the run went on after {judged.recurring} earlier ones, so it may still "
                    "be running")
    finding = Finding(rule.id, severity, exception=cause.text, offset=cause.offset,
                      where=judged.where or None)
    finding.add_hit(cause.step, cause.kind, message, KIND_WORDS[cause.kind])
    finding.count = len(judged.fatal)
    return [finding]


def _grouped(rule: RuleSpec, failures: tuple[Failure, ...], where: str) -> Finding:
    """Failures the run lived through, as one finding named by the latest; its count is
    of bursts (one worker's segfault prints a glog line, a dump and Python's last words)."""
    latest = failures[-1]
    finding = Finding(rule.id, rule.severity, exception=latest.text, offset=latest.offset)
    count = bursts(failures)
    at = "before the first step" if latest.step is None else f"at step {latest.step}"
    for failure in failures:
        finding.add_hit(failure.step, failure.kind,
                        f"{count} error(s) {where}; latest {at}: {latest.text}",
                        KIND_WORDS[failure.kind])
    finding.count = count
    return finding


def _accelerators(rule: RuleSpec, history: AcceleratorHistory, step: int | None) -> list[Finding]:
    """One finding per device that breaks the accelerator rule, judged on its recent readings."""
    params = rule.params
    findings = []
    for device in history.devices():
        sample = device.latest
        name = f"{device.host}:{sample.index}"
        reason = None
        if params["check"] == "memory-near-limit":
            used, total = sample.mem_used_mib, sample.mem_total_mib
            if used is not None and total and used / total > params["mem_fraction"]:
                value, reason = used / total, f"memory {used:.0f}/{total:.0f} MiB, near the limit"
        elif params["check"] == "memory-jump":
            memory = [v for _, v in device.recent("mem_used_mib", params["window_s"])]
            if len(memory) > 1 and memory[-1] - min(memory) > params["mem_jump_mib"]:
                value = memory[-1] - min(memory)
                reason = f"memory rose by {value:.0f} MiB in {params['window_s']:.0f} s"
        else:
            util = [v for _, v in device.recent("util_pct", params["window_s"])]
            if len(util) >= 3 and statistics.fmean(util) < params["util_below"]:
                value = statistics.fmean(util)
                reason = f"mean utilisation {value:.0f}% over {params['window_s']:.0f} s"
        if reason is not None:
            finding = Finding(rule.id, rule.severity, f"{name} {sample.name}")
            finding.add_hit(step, value, f"{name} ({sample.name}): {reason}", reason)
            findings.append(finding)
    return findings


@_judges(*(kind for kind in POINT_CHECKS if kind != "nonfinite"))
def _first_alias(engine: RuleEngine, rule: RuleSpec, judging: _Judging) -> list[Finding]:
    """A point check on the concept's series: the first of its aliases the run logged."""
    key = first_key(rule.metrics, judging.model.series, rule.skip_zero)
    if key is None:
        return []
    series = judging.model.series[key]
    if rule.kind == "band" and len(series) > rule.warmup and engine.constant_value(rule, key, series) == 0:
        constant = Finding(rule.id, Severity.NOTE, key)
        constant.note = (f"not judged: {key} is exactly 0 at all {len(series):,} steps, "
                         "constant by construction, so the band does not apply")
        return [constant]
    finding = engine.judge_series(rule, key, judging.model, judging.deadline)
    return [finding] if finding is not None else []


@_judges("nonfinite")
def _every_match(engine: RuleEngine, rule: RuleSpec, judging: _Judging) -> list[Finding]:
    """A point check on every series the rule's patterns match (any loss, any grad norm)."""
    judged = (engine.judge_series(rule, key, judging.model, judging.deadline)
              for key in matching_keys(rule.metrics, judging.model.series))
    return [finding for finding in judged if finding is not None]


@_judges("relation")
def _judge_relation(engine: RuleEngine, rule: RuleSpec, judging: _Judging) -> list[Finding]:
    return _relation(rule, judging.model)


@_judges("stalled")
def _judge_stalled(engine: RuleEngine, rule: RuleSpec, judging: _Judging) -> list[Finding]:
    crashed = judge_failures(judging.model)
    if crashed.cause is not None and not crashed.recurring:  # a dead run is not "stalled"
        return []
    return _stalled(rule, judging.model, judging.now, engine.step_seconds_of(judging.model),
                    judging.accelerators)


@_judges("incident")
def _judge_incidents(engine: RuleEngine, rule: RuleSpec, judging: _Judging) -> list[Finding]:
    return _incidents(rule, judging.model)


def _job(rule: RuleSpec, model: RunModel) -> list[Finding]:
    """The scheduler says the job failed or was stopped: the run is over, whatever the log says.

    The finding carries the scheduler's words as its ``exception``, so the header
    reads ``crashed: Slurm job 812 TIMEOUT …`` like a crash read from the log."""
    job = model.job
    if job is None or job.outcome not in (JobOutcome.FAILED, JobOutcome.STOPPED):
        return []
    said = f"{job.scheduler} job {job.job_id} {job.state}" + (f": {job.message}" if job.message else "")
    finding = Finding(rule.id, rule.severity, exception=said)
    after = "before the first step" if model.last_step is None else f"after step {model.last_step}"
    note = f" ({job.note})" if job.note else ""
    finding.add_hit(model.last_step, job.state, f"{said} ({after}){note}", job.state)
    return [finding]


@_judges("job")
def _judge_job(engine: RuleEngine, rule: RuleSpec, judging: _Judging) -> list[Finding]:
    return _job(rule, judging.model)


@_judges("accelerator")
def _judge_accelerators(engine: RuleEngine, rule: RuleSpec, judging: _Judging) -> list[Finding]:
    if judging.accelerators is None:
        return []
    return _accelerators(rule, judging.accelerators, judging.model.last_step)
