"""What the end-of-run report concludes, computed from the run model alone (pure).

The checks are the "结尾评估" (end-of-training) criteria of the RL evaluation
checklist for verl (docs/verdict.md, source E): final validation against a
target, the share of positive rewards, policy-loss mean within ±0.05, final
entropy in 0.2–0.5, KL mean in 0.005–0.02 and never above 0.03, grad-norm
mean below 0.8, and the resources the run used.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace

from tui.model.aliases import (
    ENTROPY,
    GRAD_NORM,
    KL,
    POLICY_LOSS,
    STEP_TIME,
    TRAIN_REWARD,
    Concept,
)
from tui.model.run_model import RunModel
from tui.model.series import Series
from tui.parsers.records import Sample
from tui.rules.engine import matching_keys
from tui.rules.findings import Finding, Severity
from tui.rules.run_state import run_state

VALIDATION_PATTERNS = ("val-core/*/mean@*", "val/test_score/*", "test_score/*")
MEMORY_KEYS = ("perf/max_memory_allocated_gb", "actor/perf/max_memory_allocated_gb")
# How many printed or dumped samples the report shows, and the score under
# which a sample counts as failed (seed 000: read 10–20, list those < 0.5).
SHOWN_SAMPLES = 20
WORST_SCORE = 0.5


@dataclass(frozen=True, slots=True)
class Check:
    """One pass/fail line: what was measured, against what, and why it matters."""

    name: str
    value: float | None
    expectation: str
    passed: bool | None  # None: not measurable in this run
    why: str


@dataclass(slots=True)
class Report:
    """Everything the renderers print."""

    log: str
    last_step: int | None
    total_steps: int | None
    finished: bool
    # running, stalled, crashed or finished (tui.rules.run_state).
    state: str = "running"
    task: list[Check] = field(default_factory=list)
    stability: list[Check] = field(default_factory=list)
    resources: list[Check] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    worst_samples: list[Sample] = field(default_factory=list)
    series: dict[str, tuple[str, list[int], list[float]]] = field(default_factory=dict)


def _finite(series: Series | None) -> list[float]:
    return [v for v in series.values if math.isfinite(v)] if series is not None else []


def _last(series: Series | None) -> float | None:
    values = _finite(series)
    return values[-1] if values else None


def _mean(series: Series | None) -> float | None:
    values = _finite(series)
    return statistics.fmean(values) if values else None


def _within(value: float | None, low: float, high: float) -> bool | None:
    return None if value is None else low <= value <= high


def build_report(model: RunModel, findings: list[Finding], samples: list[Sample],
                 target: float | None, rollout_scores: list[float] | None = None,
                 utilisation: list[float] | None = None) -> Report:
    """The report for ``model``; ``samples`` are the validation samples found (printed or
    dumped), ``rollout_scores`` the scores of the last dumped training rollout, if any,
    ``utilisation`` the accelerator utilisation readings (%) sampled while watching."""
    report = Report(model.log, model.last_step, model.total_steps, model.finished,
                    run_state(model, findings).value, findings=findings)
    report.task = _task(model, samples, target, rollout_scores)
    report.stability = _stability(model, findings)
    report.resources = _resources(model) + _utilisation(utilisation)
    report.samples = samples[:SHOWN_SAMPLES]
    worst = [(s.score, s) for s in samples if s.score is not None and s.score < WORST_SCORE]
    report.worst_samples = [s for _, s in sorted(worst, key=lambda pair: pair[0])][:SHOWN_SAMPLES]
    for concept in (TRAIN_REWARD, ENTROPY, KL, STEP_TIME):
        _keep_series(report, model, concept)
    for key in matching_keys(VALIDATION_PATTERNS, model.series):
        series = model.series[key]
        report.series[f"validation: {key}"] = (key, list(series.steps), list(series.values))
    return report


def _keep_series(report: Report, model: RunModel, concept: Concept) -> None:
    series, key = model.series_for(concept)
    if series is not None:
        report.series[concept.title] = (key or concept.title, list(series.steps), list(series.values))


def _task(model: RunModel, samples: list[Sample], target: float | None,
          rollout_scores: list[float] | None) -> list[Check]:
    checks = []
    for key in matching_keys(VALIDATION_PATTERNS, model.series):
        final = _last(model.series[key])
        checks.append(Check(
            f"final validation {key}", final,
            f"≥ {target:g}" if target is not None else "",  # none: nothing to expect
            None if target is None or final is None else final >= target,
            "The task is reached when the final validation score meets its threshold "
            "(e.g. GSM8K ≥ 0.55)." + ("" if target is not None else " Give it with --target.")))
    scored = rollout_scores or [s.score for s in samples if s.score is not None]
    if scored:
        share = sum(1 for s in scored if s > 0) / len(scored)
        origin = "last rollout dump" if rollout_scores else "printed/dumped validation samples"
        checks.append(Check(f"share of positive rewards ({len(scored)} samples, {origin})", share,
                            "high (→ 100%)",
                            None, "The share of positive rewards should grow towards 100%."))
    else:
        reward, reward_key = model.series_for(TRAIN_REWARD)
        final = _last(reward)
        checks.append(Check(f"final train reward ({reward_key})", final, "rising; = share of positive "
                            "rewards when rewards are 0/1", None,
                            "The final train reward mean should reach the task threshold; "
                            "no per-sample scores were printed or dumped to count positive ones."))
    return checks


def _stability(model: RunModel, findings: list[Finding]) -> list[Check]:
    """The end-of-training stability checks. The KL's are not passed or failed where the
    rules made their KL band a note: a band this run sat outside of from its first steps
    (a property of the run, said once in the findings) or one its config says cannot mean
    what the checklist means (the KL in the reward)."""
    loss, _ = model.series_for(POLICY_LOSS)
    entropy, _ = model.series_for(ENTROPY)
    kl, _ = model.series_for(KL)
    grad, _ = model.series_for(GRAD_NORM)
    loss_mean, kl_mean, kl_values, grad_mean = _mean(loss), _mean(kl), _finite(kl), _mean(grad)
    kl_note = next((f for f in findings if f.rule == "kl-high" and f.severity == Severity.NOTE
                    and (f.since is not None or not f.count)), None)
    return [
        Check("policy loss mean", loss_mean, "within ±0.05", _within(loss_mean, -0.05, 0.05),
              "The policy loss settles near 0 (±0.05) when updates have converged."),
        Check("final entropy", _last(entropy), "0.2–0.5", _within(_last(entropy), 0.2, 0.5),
              "Entropy ends between 0.2 and 0.5 — exploring and exploiting in balance."),
        _kl_noted(Check("KL loss mean", kl_mean, "0.005–0.02", _within(kl_mean, 0.005, 0.02),
                        "A KL mean in 0.005–0.02 means updates stayed controlled."), kl_note),
        _kl_noted(Check("KL loss max", max(kl_values) if kl_values else None, "never above 0.03",
                        None if not kl_values else max(kl_values) <= 0.03,
                        "KL above 0.03 at any step risks a collapse of the update."), kl_note),
        Check("grad norm mean", grad_mean, "< 0.8", None if grad_mean is None else grad_mean < 0.8,
              "A grad-norm mean under 0.8 means training stayed stable."),
    ]


def _kl_noted(check: Check, note: Finding | None) -> Check:
    """``check`` neither passed nor failed, with the rules' note as why, where there is one."""
    if note is None or check.passed is None:
        return check
    return replace(check, passed=None, why=f"{check.why} Not judged here: {note.rule} is a note "
                                           f"({note.note}).")


def _utilisation(readings: list[float] | None) -> list[Check]:
    """Mean accelerator utilisation over the run, > 70% good, < 30% poor."""
    if not readings:
        return [Check("mean accelerator utilisation, %", None, "> 70 (sampled by the dashboard)",
                      None, "Above 70% means the hardware is used well, below 30% poor.")]
    mean = statistics.fmean(readings)
    return [Check(f"mean accelerator utilisation ({len(readings)} readings), %", mean, "> 70",
                  True if mean > 70 else False if mean < 30 else None,
                  "Above 70% means the hardware is used well, below 30% poor.")]


def _resources(model: RunModel) -> list[Check]:
    step_time, _ = model.series_for(STEP_TIME)
    times = _finite(step_time)
    checks = [
        Check("total time (sum of step times), s", sum(times) if times else None,
              "what you planned", None,
              "Compare the total training time with what was planned."),
        Check("mean s/it", statistics.fmean(times) if times else None, "reasonable for the model", None,
              "The mean step time should be reasonable for the model and hardware."),
        Check("s/it spread (standard deviation)", statistics.pstdev(times) if len(times) > 1 else None,
              "small; no 3× swings", None, "Step time should not swing 3× or keep rising."),
    ]
    memory_key = next((key for key in MEMORY_KEYS if key in model.series), None)
    peak = max(_finite(model.series[memory_key]), default=None) if memory_key else None
    checks.append(Check(f"peak memory ({memory_key or 'not logged'}), GB", peak,
                        "below the device limit", None,
                        "The peak memory must stay under the device's limit (no OOM risk)."))
    return checks


def verdict_line(report: Report) -> str:
    """The report in one line, for a message that says a run is over: where it ended, the
    final validation score where it printed one, and the end-of-run checks that failed."""
    total = f"/{report.total_steps}" if report.total_steps else ""
    parts = [f"{report.state} at step {report.last_step}{total}"]
    for check in report.task:
        if check.name.startswith("final validation") and check.value is not None:
            parts.append(f"{check.name.removeprefix('final validation ')} {check.value:.4g}")
            break
    checks = report.task + report.stability + report.resources
    failed = [check.name for check in checks if check.passed is False]
    judged = [check for check in checks if check.passed is not None]
    if judged:
        parts.append(f"{len(judged) - len(failed)} of {len(judged)} end-of-run checks pass"
                     + (f" (failing: {', '.join(failed)})" if failed else ""))
    return "; ".join(parts)
