"""The rules over whole real runs, and the engine's incremental bookkeeping."""

import asyncio
import json
import math

import pytest

from tests.corpus import verl_log
from tests.support import NOW, findings_of, model_of
from tui.cli.check import load
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import IncidentRecord, RunEndRecord, StepRecord
from tui.rules.engine import JUDGES, RuleEngine
from tui.rules.findings import Severity
from tui.rules.rule_file import KIND_PARAMS, load_rules


@pytest.mark.parametrize("prefix", ["029", "031", "032", "033", "034", "035"])
def test_healthy_whole_runs_have_no_critical_finding(prefix):
    found = findings_of(model_of(prefix), now=NOW + 7 * 86400)  # read a week later
    critical = [f.rule for group in found.values() for f in group if f.severity == "critical"]
    assert critical == []


def test_a_healthy_run_whose_end_the_log_does_not_show_is_only_stalled_a_week_later():
    """Corpus 030 (verl 0.1) says neither its end nor how long a step takes (its total, 210, only
    in its workers' LR-schedule lines; it stops at step 105): a log silent for a week is judged
    by its silence, and nothing else."""
    model = model_of("030")
    assert not model.finished
    found = findings_of(model, now=NOW + 7 * 86400)
    critical = [f.rule for group in found.values() for f in group if f.severity == "critical"]
    assert critical == ["stalled"]
    assert findings_of(model, now=NOW + 60).get("stalled") is None  # read as it is written


def test_healthy_runs_still_show_what_is_outside_the_checklist_bands():
    found = findings_of(model_of("032"))
    entropy = found["entropy-low"][0]
    # Shown, as a note: below the band from step 21 on, a property of this run.
    assert entropy.severity == "note" and entropy.metric == "actor/entropy_loss" and entropy.since == 21
    assert entropy.count > 1000 and entropy.last_step == 1119  # one grouped finding, not 1,000
    assert found["kl-high"][0].value == 0.08


def test_nan_loss_is_critical():
    found = findings_of(model_of("036"))
    assert {f.metric for f in found["loss-nan"]} == {"critic/vf_loss", "critic/grad_norm"}
    assert all(f.severity == "critical" and f.first_step == 1 for f in found["loss-nan"])
    assert found["loss-nan"][0].to_json()["value"] == "nan"


def read_whole(prefix: str) -> RunModel:
    """The corpus log read the way ``check`` reads it (failure blocks read too)."""
    return asyncio.run(load(str(verl_log(prefix)), None))


@pytest.mark.parametrize(("prefix", "kind", "exception"), [
    ("018", "oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 13.91 GiB"),
    ("021", "collective-timeout", "[E419 10:42:28.858931807 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog"),
    ("008", "ray-error", "RuntimeError: No backend type associated with device type cpu"),
    ("009", "actor-died", "ray.exceptions.ActorDiedError: The actor died unexpectedly"),
])
def test_crashes_are_critical_and_name_what_failed(prefix, kind, exception):
    (crash,) = findings_of(read_whole(prefix))["crash"]
    assert crash.severity == "critical" and crash.value == kind
    assert crash.exception.startswith(exception) and exception in crash.message
    assert crash.offset is not None and "before the first step" in crash.message


def test_the_22543_second_step_and_the_length_surge_of_034_are_flagged():
    found = findings_of(model_of("034"))
    (slow,) = found["step-time"]
    assert slow.first_step == slow.last_step == 160 and slow.value == pytest.approx(22543.5, abs=1)
    (length,) = found["length-jump"]
    assert length.first_step >= 150 and length.severity == "warning"


def test_failures_the_run_went_on_after_are_warnings_and_those_after_its_end_notes():
    found = findings_of(read_whole("034"))
    assert "crash" not in found
    went_on, after_end = found["errors"]
    # An event the run lived through stands; Ray tearing workers down after the run's own
    # end is its teardown, said but not counted.
    assert went_on.severity == "warning" and after_end.severity == "note" and "teardown" in after_end.note
    # Two Ray workers segfaulted during step 210, and the run finished anyway.
    assert went_on.count == 2 and went_on.last_step == 209
    assert went_on.exception == "Fatal Python error: Segmentation fault"
    # Two raylet lines, one after the other: one burst of Ray tearing its workers down.
    assert "after the run printed its end" in after_end.message and after_end.count == 1


def steps(model: RunModel, points: list[tuple[int, dict]], at: float = 0.0) -> None:
    model.apply([StepRecord(s, m, s * 100, s * 100 + 99) for s, m in points], now=at)


def test_stalled_only_when_quiet_for_long_and_not_finished():
    model = RunModel()
    steps(model, [(s, {"timing_s/step": 60.0}) for s in range(1, 11)], at=1000.0)
    model.note_write(1000.0)
    assert "stalled" not in findings_of(model, now=1000.0 + 599)  # under the 10-minute floor
    (stall,) = findings_of(model, now=1000.0 + 601)["stalled"]
    assert stall.severity == "critical" and stall.last_step == 10
    model.apply([RunEndRecord(5000)], now=0)
    assert "stalled" not in findings_of(model, now=1000.0 + 10_000)


def test_one_engine_judges_stalled_by_the_step_times_as_they_are_now():
    engine = RuleEngine(load_rules())
    model = RunModel()
    steps(model, [(s, {"timing_s/step": 200.0}) for s in range(1, 11)], at=1000.0)
    model.note_write(1000.0)
    stalled = lambda now: [f for f in engine.evaluate(model, now) if f.rule == "stalled"]  # noqa: E731
    assert stalled(1000.0 + 1001) and stalled(1000.0 + 1001)  # 5 x 200 s, judged twice alike
    steps(model, [(s, {"timing_s/step": 400.0}) for s in range(11, 31)], at=1000.0)  # steps grew slower
    assert not stalled(1000.0 + 1001)  # the typical step is 400 s now: 2,000 s to call it stalled
    for step in range(11, 31):  # rewritten points count too (a resumed run re-did them fast)
        model.series["timing_s/step"].set(step, 10.0)
    assert stalled(1000.0 + 1001)  # typical 10 s: the 10-minute floor applies


def test_rounded_zero_advantage_mean_is_not_a_dead_signal():
    model = RunModel()
    steps(model, [(s, {"critic/advantages/mean": 0.0, "critic/advantages/max": 0.8,
                       "critic/advantages/min": -0.7}) for s in range(1, 11)])
    assert "adv-zero" not in findings_of(model)
    steps(model, [(s, {"critic/advantages/mean": 0.0, "critic/advantages/max": 0.0,
                       "critic/advantages/min": 0.0}) for s in range(11, 16)])
    (dead,) = findings_of(model)["adv-zero"]
    assert dead.first_step == 15 and dead.count == 1


def test_incremental_evaluation_matches_a_fresh_one_and_sees_rewrites():
    model = RunModel()
    engine = RuleEngine(load_rules())
    for s in range(1, 31):
        steps(model, [(s, {"actor/kl_loss": 0.05 if s % 2 else 0.01})])
        engine.evaluate(model, NOW)
    incremental = {f.rule: f.count for f in engine.evaluate(model, NOW)}
    assert incremental == {f.rule: f.count for f in RuleEngine(load_rules()).evaluate(model, NOW)}
    assert incremental["kl-high"] == 15
    steps(model, [(2, {"actor/kl_loss": 0.09})])  # a re-printed step rewrites history
    assert {f.rule: f.count for f in engine.evaluate(model, NOW)}["kl-high"] == 16


def test_a_truncated_log_starts_the_judgement_over():
    model = RunModel()
    engine = RuleEngine(load_rules())
    steps(model, [(1, {"actor/kl_loss": math.nan})])
    assert engine.evaluate(model, NOW)[0].rule == "loss-nan"
    model.reset()
    steps(model, [(1, {"actor/kl_loss": 0.01})])
    assert engine.evaluate(model, NOW) == []


def test_disabled_rules_do_not_run():
    rules = [r for r in load_rules() if r.id == "kl-high"]
    from dataclasses import replace

    model = RunModel()
    steps(model, [(1, {"actor/kl_loss": 0.5})])
    assert RuleEngine([replace(rules[0], enabled=False)]).evaluate(model, NOW) == []


def test_incident_step_is_the_last_step_before_it():
    model = RunModel()
    steps(model, [(1, {"a": 1.0}), (2, {"a": 1.0})])
    model.apply([IncidentRecord("oom", "CUDA out of memory", 350)], now=0)
    (crash,) = findings_of(model)["crash"]
    assert crash.first_step == 2 and crash.severity == "critical" and "after step 2" in crash.message


def test_accelerator_rules_on_device_readings():
    from tui.model.accelerators import AcceleratorHistory
    from tui.parsers.smi.records import AcceleratorSample

    def reading(used: float, util: float) -> AcceleratorSample:
        return AcceleratorSample("box", 0, "GPU-1", "NVIDIA H100 80GB HBM3", util, used, 81559.0,
                                 60.0, 500.0)

    history = AcceleratorHistory()
    for second, (used, util) in enumerate([(10_000, 20.0), (15_000, 30.0), (79_000, 10.0)]):
        history.add([reading(used, util)], 1000.0 + second)
    model = RunModel()
    found = {f.rule: f for f in RuleEngine(load_rules()).evaluate(model, NOW, accelerators=history)}
    assert found["gpu-memory-limit"].value == pytest.approx(79_000 / 81559)
    assert found["gpu-memory-jump"].value == 69_000
    assert found["gpu-idle"].value == pytest.approx(20.0)
    assert found["gpu-idle"].metric == "box:0 NVIDIA H100 80GB HBM3"
    assert all(f.severity == "warning" for f in found.values())


@pytest.mark.parametrize(("prefix", "key"), [("033", "critic/kl"), ("032", "actor/kl_loss")])
def test_kl_high_reads_the_kl_to_the_reference(prefix, key):
    (kl,) = findings_of(model_of(prefix))["kl-high"]
    assert kl.metric == key and kl.count > 100


def test_kl_high_skips_a_kl_loss_that_is_zero_because_unused():
    model = RunModel()
    steps(model, [(s, {"actor/kl_loss": 0.0, "actor/ppo_kl": 0.5, "actor/reward_kl_penalty": 0.06})
                  for s in range(1, 4)])
    (kl,) = findings_of(model)["kl-high"]
    assert kl.metric == "actor/reward_kl_penalty" and kl.count == 3


def test_a_failure_after_wandbs_summary_is_still_the_crash():
    """wandb prints its summary on any exit, so a traceback printed after it is no teardown
    noise after the run's end (verl's Final validation metrics would be)."""
    scanner = LogScanner()
    text = (b"step:1 - critic/score/mean:0.5\n"
            b"wandb: Run summary:\nwandb: critic/score/mean 0.5\nwandb:\n"
            b"Traceback (most recent call last):\n  File \"m.py\", line 1, in <module>\n"
            b"    main()\nRuntimeError: reward server down\n")
    model = RunModel()
    model.apply(scanner.feed(text) + scanner.finish(), now=NOW)
    from tui.parsers.crash_block import read_block  # read as the feed reads the block
    marker = text.index(b"Traceback")
    model.apply([read_block(text, 0, marker, "traceback", False)], now=NOW)
    (crash,) = findings_of(model)["crash"]
    assert crash.severity == "critical" and crash.exception == "RuntimeError: reward server down"


def test_every_kind_a_rule_file_may_name_has_a_judge_and_no_judge_is_unreachable():
    assert set(JUDGES) == set(KIND_PARAMS)


def test_the_json_form_keeps_its_contract_severity_as_a_word():
    finding = findings_of(model_of("036"))["loss-nan"][0]
    assert finding.severity is Severity.CRITICAL
    assert json.loads(json.dumps(finding.to_json()))["severity"] == "critical"
