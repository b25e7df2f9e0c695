"""The verdict's levels: critical, warning and note; conditions that clear, events that stand,
rules that do not apply to a run, and muting."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus import verl_log
from tests.support import findings_of, model_of
from tui.cli.check import load
from tui.model.run_model import RunModel
from tui.parsers.records import StepRecord
from tui.parsers.run_config import RunConfig
from tui.rules.engine import RuleEngine
from tui.rules.standing import Standing
from tui.rules.findings import Severity, worst_severity
from tui.rules.rule_file import RuleFileError, apply_overrides, load_rules


def run_of(points: list[dict[str, float]]) -> RunModel:
    model = RunModel()
    model.apply([StepRecord(step, metrics, step * 100, step * 100 + 99)
                 for step, metrics in enumerate(points, 1)], now=0.0)
    return model


def judged(model: RunModel, **engine: object) -> dict[str, list]:
    out: dict[str, list] = {}
    for finding in RuleEngine(load_rules(), **engine).evaluate(model, 0.0):  # type: ignore[arg-type]
        out.setdefault(finding.rule, []).append(finding)
    return out


@pytest.mark.parametrize("prefix", ["031", "032", "033", "035"])
def test_the_healthy_whole_runs_of_the_corpus_end_with_nothing_counted(prefix):
    """Each sits outside several checklist bands for most of its life: said once, as notes."""
    found = [f for group in findings_of(model_of(prefix)).values() for f in group]
    assert worst_severity(found) is None, [(f.rule, f.severity, f.message) for f in found if f.counts]
    assert found and all(f.severity == "note" for f in found)


def test_the_notes_of_032_say_since_when():
    found = findings_of(model_of("032"))
    assert found["kl-high"][0].since == 11 and found["entropy-low"][0].since == 21
    assert "a property of this run" in found["kl-high"][0].to_json()["note"]
    # A grad norm above 1.0 at 11 steps of 1,120, the last at 1091: a condition that cleared.
    grad = found["grad-high"][0]
    assert grad.severity == "note" and grad.note == "cleared: no longer so from step 1092"


def test_034s_slow_step_and_length_surge_are_still_warnings():
    found = findings_of(model_of("034"))
    assert found["step-time"][0].severity == found["length-jump"][0].severity == "warning"
    assert worst_severity([f for group in found.values() for f in group]) is Severity.WARNING


def test_032s_reward_falling_inside_its_own_noise_is_not_news():
    """0.978 → 0.972 → 0.969 (steps 1071–1073) was "reward-falling"; the reward moves about
    0.005 a step, so three small falls are its noise."""
    falling = findings_of(model_of("032"))["reward-falling"][0]
    assert 1073 not in falling.steps
    assert falling.severity == "note"


def test_a_band_left_mid_run_warns_then_settles_into_a_note():
    inside = [{"actor/entropy": 0.5}] * 30
    outside = [{"actor/entropy": 0.05}]
    assert judged(run_of(inside + outside * 5))["entropy-low"][0].severity == "warning"
    settled = judged(run_of(inside + outside * 20))["entropy-low"][0]
    assert settled.severity == "note" and settled.since == 31
    # Back inside: the condition cleared, so the warning does too.
    back = judged(run_of(inside + outside * 5 + inside[:1]))["entropy-low"][0]
    assert back.severity == "note" and back.note == "cleared: no longer so from step 36"


def test_an_event_stands_after_the_metric_is_back():
    """A step far slower than the others stays a warning when the next steps are normal again."""
    points = [{"timing_s/step": 100.0}] * 20 + [{"timing_s/step": 10000.0}] + [{"timing_s/step": 100.0}] * 30
    (slow,) = judged(run_of(points))["step-time"]
    assert slow.severity == "warning" and slow.last_step == 21


def test_a_clip_fraction_exactly_zero_throughout_is_not_judged():
    zero = judged(run_of([{"actor/pg_clipfrac": 0.0}] * 30))["clipfrac"][0]
    assert zero.severity == "note" and zero.count == 0
    assert "exactly 0 at all 30 steps" in zero.note and "constant by construction" in zero.note
    # Once it moves, it is a measurement again, judged from the start (after the warm-up):
    # never inside the band, so a note of the run, since step 6.
    moved = judged(run_of([{"actor/pg_clipfrac": 0.0}] * 29 + [{"actor/pg_clipfrac": 0.5}]))["clipfrac"][0]
    assert moved.count == 25 and moved.since == 6


def test_where_the_config_puts_the_kl_in_the_reward_the_kl_band_is_not_judged():
    model = run_of([{"actor/reward_kl_penalty": 0.2}] * 10)
    model.config = RunConfig({"algorithm.use_kl_in_reward": "True"}, True, 0, 0)
    (kl,) = judged(model)["kl-high"]
    assert kl.severity == "note" and kl.count == 0
    assert "adds the KL to the reward" in kl.note and "algorithm.use_kl_in_reward=True" in kl.note
    model.config = RunConfig({"algorithm.use_kl_in_reward": "False"}, True, 0, 0)
    assert judged(model)["kl-high"][0].count == 10  # judged where the config does not say so


def test_muted_findings_are_shown_and_not_counted():
    points = [{"timing_s/step": 100.0}] * 20 + [{"timing_s/step": 10000.0}]
    (slow,) = judged(run_of(points), muted={"step-time": None})["step-time"]
    assert slow.muted and slow.severity == "warning" and not slow.counts
    assert worst_severity([slow]) is None and slow.said().endswith("(muted)")


def test_an_acknowledged_event_stands_again_when_it_happens_again():
    """Muted at step 21 (the dashboard's m): that slow step is acknowledged, the next is news."""
    calm, slow = [{"timing_s/step": 100.0}] * 20, [{"timing_s/step": 10000.0}]
    (once,) = judged(run_of(calm + slow + calm), muted={"step-time": 21})["step-time"]
    assert once.muted
    (again,) = judged(run_of(calm + slow + calm + slow), muted={"step-time": 21})["step-time"]
    assert not again.muted and again.counts and again.last_step == 42
    # A condition muted stays muted while it goes on (every step is a new hit).
    out = [{"actor/entropy": 0.5}] * 30 + [{"actor/entropy": 0.05}] * 5
    (low,) = judged(run_of(out), muted={"entropy-low": 31})["entropy-low"]
    assert low.muted and low.last_step == 35


def test_a_rule_file_and_the_command_line_mute_rules():
    rules = apply_overrides(load_rules(), 'mute = ["step-time"]\n', "r.toml")
    assert [rule.id for rule in rules if rule.muted] == ["step-time"]
    assert [rule.id for rule in load_rules(mute="clipfrac, kl-high") if rule.muted] == ["kl-high", "clipfrac"]
    with pytest.raises(RuleFileError, match="no rule named 'klhigh' to mute"):
        load_rules(mute="klhigh")
    with pytest.raises(RuleFileError, match="mute must be a list of rule ids"):
        apply_overrides(load_rules(), 'mute = "step-time"\n', "r.toml")


def standing_by_scan(hits: list[bool]) -> tuple[int, int, int] | None:
    """The reference: every start tried, the earliest hit with at least half hits from it on."""
    for start, hit in enumerate(hits):
        since = hits[start:]
        if hit and sum(since) >= 0.5 * len(since):
            return start, sum(since), len(since)
    return None


@settings(max_examples=300, deadline=None)
@given(hits=st.lists(st.booleans(), max_size=60), cut=st.integers(0, 60))
def test_standing_kept_step_by_step_is_the_scan_of_every_start(hits, cut):
    standing = Standing(0.5)
    for point, hit in enumerate(hits):
        standing.feed(point + 1, hit)
        if point == cut:  # asked midway too, as the dashboard asks on every judgement
            expected = standing_by_scan(hits[:point + 1])
            got = standing.since()
            assert (got and (got[0] - 1, got[1], got[2])) == expected
    got = standing.since()
    assert (got and (got[0] - 1, got[1], got[2])) == standing_by_scan(hits)


def test_a_standing_band_tolerates_dips_back_inside():
    standing = Standing(0.5)
    standing.catch_up(list(range(1, 101, 2)), list(range(1, 101)), 100)  # every other step
    assert standing.since() == (1, 50, 100, 0)


def test_a_whole_run_read_as_check_reads_it_is_quiet_too():
    session_model = asyncio.run(load(str(verl_log("035")), None))
    found = [f for group in findings_of(session_model).values() for f in group]
    assert worst_severity(found) is None
