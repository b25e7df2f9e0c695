"""A run's verdict as numbers for a lab's monitoring (Prometheus, node_exporter's textfile collector).

Pure: a judged run → ``Sample``s (a metric name, its labels, a value). The
exposition (``prometheus_client``) is the command line's; this module says
what is exposed, so the watcher's endpoint and ``check --format openmetrics``
expose the same:

* ``rlwatch_run_state{state=…}``: 1 for the run's state, 0 for the others
  (alert on ``rlwatch_run_state{state="crashed"} == 1``);
* ``rlwatch_run_readable``: whether the run's log can be read now;
* ``rlwatch_run_step``, ``rlwatch_run_total_steps``, ``rlwatch_run_seconds_per_step``,
  ``rlwatch_run_seconds_since_last_step``;
* ``rlwatch_run_metric{concept=…}``: the newest value of the key metrics, by the concept
  that names them whatever the trainer (reward, validation, KL, entropy, grad norm,
  response length);
* ``rlwatch_run_findings{rule=…,severity=…}``: how many findings of each rule;
* ``rlwatch_run_process_state{pid=…,state=…}``: 1 for each of the run's processes read while it
  looked stuck, labelled with its state letter (alert on ``{state="T"}`` or ``{state="D"}``).

Every run carries ``run`` and ``host`` labels, in their neutralised form.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tui.model.aliases import ENTROPY, GRAD_NORM, KL, RESPONSE_LENGTH, TRAIN_REWARD, VALIDATION, Concept
from tui.model.run_model import RunModel
from tui.parsers.text import safe_text
from tui.rules.findings import Finding
from tui.rules.process_activity import run_processes
from tui.rules.run_state import RunState, run_state

CONCEPTS: tuple[Concept, ...] = (TRAIN_REWARD, VALIDATION, KL, ENTROPY, GRAD_NORM, RESPONSE_LENGTH)

# name → (help, the labels besides run and host)
METRICS: dict[str, tuple[str, tuple[str, ...]]] = {
    "rlwatch_run_state": ("1 for the run's state (pending, running, stalled, crashed, finished), "
                          "0 for the others", ("state",)),
    "rlwatch_run_readable": ("1 while the run's log can be read, 0 while its host or file cannot", ()),
    "rlwatch_run_step": ("the run's newest step", ()),
    "rlwatch_run_total_steps": ("the number of steps the run will take", ()),
    "rlwatch_run_seconds_per_step": ("seconds a step takes (the run's own figure)", ()),
    "rlwatch_run_seconds_since_last_step": ("seconds since the newest step was logged", ()),
    "rlwatch_run_metric": ("the newest value of a key metric, by concept (reward, val, kl, entropy, "
                           "grad_norm, response_length)", ("concept", "key")),
    "rlwatch_run_findings": ("how many findings of a rule the run has, by severity", ("rule", "severity")),
    "rlwatch_run_process_state": ("1 for each process of the run read since its last step (a stuck run's), "
                                  "by pid and state (R, S, D, T, t, Z, gone, reused)", ("pid", "state")),
}


@dataclass(frozen=True, slots=True)
class Sample:
    """One value of one metric, with its labels (run and host first)."""

    name: str
    labels: tuple[tuple[str, str], ...]
    value: float


def run_samples(run: str, host: str, model: RunModel | None, findings: list[Finding],
                readable: bool, now: float) -> list[Sample]:
    """What a run exposes; a run never read yet (``model`` None) exposes only that it is not readable."""
    who = (("run", safe_text(run)), ("host", safe_text(host)))

    def sample(name: str, value: float, *labels: tuple[str, str]) -> Sample:
        return Sample(name, who + tuple((key, safe_text(text)) for key, text in labels), float(value))

    samples = [sample("rlwatch_run_readable", 1.0 if readable else 0.0)]
    if model is None:
        return samples
    state = run_state(model, findings)
    samples += [sample("rlwatch_run_state", 1.0 if state == each else 0.0, ("state", each.value))
                for each in RunState]
    last_at = model.last_step_at
    for name, value in (("rlwatch_run_step", model.last_step), ("rlwatch_run_total_steps", model.total_steps),
                        ("rlwatch_run_seconds_per_step", model.sec_per_it),
                        ("rlwatch_run_seconds_since_last_step",
                         max(0.0, now - last_at) if last_at is not None else None)):
        if value is not None:
            samples.append(sample(name, value))
    for concept in CONCEPTS:
        series, key = model.series_for(concept)
        if series is not None and len(series.values):
            # A nan is exposed as NaN (and an alert rule can look for it with ``!= … ``).
            samples.append(sample("rlwatch_run_metric", series.values[-1], ("concept", concept.id),
                                  ("key", key or concept.id)))
    counts = Counter((finding.rule, finding.severity.value) for finding in findings)
    samples += [sample("rlwatch_run_findings", count, ("rule", rule), ("severity", severity))
                for (rule, severity), count in sorted(counts.items())]
    samples += [sample("rlwatch_run_process_state", 1.0, ("pid", str(process.pid)), ("state", process.state))
                for process in run_processes(model)]
    return samples
