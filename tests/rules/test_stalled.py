"""The stalled rule's wording: a short stall in seconds (a rule file's small limits), a long
one in hours and minutes, never "0 min"."""

from __future__ import annotations

from tui.model.run_model import RunModel
from tui.parsers.records import StepRecord
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import apply_overrides, load_rules

QUICK = '[[rule]]\nid = "stalled"\nfactor = 1.0\nmin_seconds = 5.0\n'


def stalled(model: RunModel, now: float, overrides: str = "") -> list:
    rules = apply_overrides(load_rules(), overrides, "rules.toml") if overrides else load_rules()
    return [f for f in RuleEngine(rules).evaluate(model, now) if f.rule == "stalled"]


def run_of(step_seconds: float, last_written: float) -> RunModel:
    model = RunModel()
    model.apply([StepRecord(s, {"timing_s/step": step_seconds}, s * 100, s * 100 + 99)
                 for s in range(1, 11)], now=last_written)
    model.note_write(last_written)
    return model


def test_a_short_stall_is_worded_in_seconds():
    (finding,) = stalled(run_of(2.0, 1000.0), now=1045.0, overrides=QUICK)
    assert finding.message.startswith("no new step for 45 s after step 10 (typical step 2 s)")
    assert finding.severity == "critical" and finding.value == 45.0


def test_a_long_stall_is_worded_in_hours_and_minutes():
    (finding,) = stalled(run_of(81.0, 1000.0), now=1000.0 + 2 * 3600 + 5 * 60 + 30)
    assert finding.message.startswith("no new step for 2 h 05 min after step 10 (typical step 1 min)")


def test_under_the_limit_nothing_is_said():
    assert stalled(run_of(2.0, 1000.0), now=1004.0, overrides=QUICK) == []


def silent_since(last_written: float, steps: int = 0) -> RunModel:
    """A run whose log gives no step time: none at all yet, or steps without a timing key."""
    model = RunModel()
    model.apply([StepRecord(s, {"reward": 0.5}, s * 100, s * 100 + 99) for s in range(1, steps + 1)],
                now=last_written)
    model.note_write(last_written)
    return model


def test_a_run_with_no_step_yet_stalls_when_its_log_falls_silent():
    """Hung before the first step (a collective's init, a model loading): nothing written
    for an hour is a stall, though there is no step time to measure it by."""
    (finding,) = stalled(silent_since(1000.0), now=1000.0 + 75 * 60)
    assert finding.message.startswith("no step yet and nothing written for 1 h 15 min")
    assert finding.severity == "critical" and finding.first_step is None


def test_a_young_or_busy_start_is_not_stalled():
    assert stalled(silent_since(1000.0), now=1000.0 + 50 * 60) == []  # a big model's first step
    assert stalled(RunModel(), now=1e9) == []  # nothing read at all: no time to judge by


def test_steps_without_a_step_time_stall_by_the_logs_silence():
    (finding,) = stalled(silent_since(1000.0, steps=3), now=1000.0 + 2 * 3600)
    assert finding.message.startswith("nothing written for 2 h 00 min after step 3")


def test_the_silence_allowed_is_a_rule_setting():
    quick = '[[rule]]\nid = "stalled"\nquiet_seconds = 60.0\n'
    assert stalled(silent_since(1000.0), now=1090.0, overrides=quick)
