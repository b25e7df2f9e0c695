"""What a judged run exposes to Prometheus: real runs, read and judged as the watcher does."""

from __future__ import annotations

import math

from tests.corpus import verl_log
from tests.session.test_events import FINISHED, RAISED, judged
from tui.session.run_metrics import run_samples


def values(samples, name):
    return {tuple(pair for pair in sample.labels if pair[0] not in ("run", "host")): sample.value
            for sample in samples if sample.name == name}


def test_a_crashed_run_is_in_the_crashed_state_with_its_step_and_finding():
    session = judged(RAISED)
    samples = run_samples("cola", "gpu-1", session.model, session.findings, True, 1e10)
    assert values(samples, "rlwatch_run_state") == {
        (("state", "pending"),): 0.0, (("state", "running"),): 0.0, (("state", "stalled"),): 0.0,
        (("state", "crashed"),): 1.0, (("state", "finished"),): 0.0}
    assert values(samples, "rlwatch_run_step") == {(): 4.0}
    assert values(samples, "rlwatch_run_seconds_per_step") == {(): 0.5042}
    assert values(samples, "rlwatch_run_findings") == {
        # grad-high: a band broken from the run's first judged step on is a note of the run
        (("rule", "crash"), ("severity", "critical")): 1.0, (("rule", "grad-high"), ("severity", "note")): 1.0}
    assert all(sample.labels[:2] == (("run", "cola"), ("host", "gpu-1")) for sample in samples)


def test_the_key_metrics_are_exposed_by_concept():
    session = judged(FINISHED)
    samples = run_samples("grpo", "local", session.model, session.findings, True, 1e10)
    metrics = {labels[0][1]: value for labels, value in values(samples, "rlwatch_run_metric").items()}
    assert set(metrics) == {"reward", "val", "kl", "entropy", "grad_norm", "response_length"}
    assert metrics["val"] == 0.875 and metrics["reward"] == 0.9375
    assert values(samples, "rlwatch_run_total_steps") == {(): 8.0}


def test_nan_findings_are_counted_by_rule_and_severity():
    session = judged(verl_log("036"))
    samples = run_samples("ppo", "local", session.model, session.findings, True, 1e10)
    assert values(samples, "rlwatch_run_findings")[(("rule", "loss-nan"), ("severity", "critical"))] == 2.0


def test_a_run_not_read_yet_says_only_that_it_cannot_be_read():
    samples = run_samples("cola", "gpu-\x1b[2J1", None, [], False, 0.0)
    assert [(s.name, s.labels, s.value) for s in samples] == [
        ("rlwatch_run_readable", (("run", "cola"), ("host", "gpu-␛[2J1")), 0.0)]
    assert not any(math.isnan(s.value) for s in samples)
