"""The stalled rule's wording: a short stall in seconds (a rule file's small limits), a long
one in hours and minutes, never "0 min"."""

from __future__ import annotations

from tui.model.run_model import RunModel
from tui.parsers.records import StepRecord
from tui.parsers.run_config import parse_run_config
from tui.rules.engine import RuleEngine
from tui.rules.eta import overdue_words
from tui.rules.rule_file import apply_overrides, load_rules
from tui.rules.stall_phase import phase_allowance

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


# A run whose checkpoint saves are slow: a minute a step, every 50th step also saves, and the
# saves at steps 50 and 100 took 30 min and 20 min (verl's timing_s/save_checkpoint).
SAVES_EVERY_50 = b"(TaskRunner pid=7) {'trainer': {'save_freq': 50, 'test_freq': -1}}\n"


def slow_saver(last_step: int, last_written: float) -> RunModel:
    model = RunModel()
    model.config = parse_run_config(SAVES_EVERY_50)
    saves = {50: 1800.0, 100: 1200.0}
    model.apply([StepRecord(s, {"timing_s/step": 60.0, **({"timing_s/save_checkpoint": saves[s]} if s in saves else {})},
                            s * 100, s * 100 + 99) for s in range(1, last_step + 1)], now=last_written)
    model.note_write(last_written)
    return model


def test_a_step_that_saves_may_take_as_long_as_the_slowest_save_twice():
    """Step 150 saves; the slowest save took 30 min: 40 min without step 150 is a save under
    way, not a hang (1 min + 2 × 30 min = 61 min is)."""
    assert stalled(slow_saver(149, 1000.0), now=1000.0 + 40 * 60) == []
    (finding,) = stalled(slow_saver(149, 1000.0), now=1000.0 + 62 * 60)
    assert finding.message.startswith("no new step for 1 h 02 min after step 149 (typical step 1 min), where: unknown")
    assert "step 150 saves a checkpoint (trainer.save_freq=50)" in finding.message


def test_a_step_that_does_not_save_gets_no_allowance():
    (finding,) = stalled(slow_saver(147, 1000.0), now=1000.0 + 40 * 60)
    assert finding.message.startswith("no new step for 40 min after step 147")


def test_the_allowance_stops_at_the_ceiling():
    ceiling = '[[rule]]\nid = "stalled"\nmax_seconds = 1800.0\n'
    assert stalled(slow_saver(149, 1000.0), now=1000.0 + 29 * 60, overrides=ceiling) == []
    assert len(stalled(slow_saver(149, 1000.0), now=1000.0 + 31 * 60, overrides=ceiling)) == 1


def test_the_floor_still_holds_for_a_fast_run():
    """2 s steps: 5 × 2 s is 10 s, but the default floor is 10 min."""
    assert stalled(run_of(2.0, 1000.0), now=1000.0 + 9 * 60) == []
    assert len(stalled(run_of(2.0, 1000.0), now=1000.0 + 11 * 60)) == 1


def test_the_header_counts_the_silence_against_a_step_and_its_save():
    """Before the stall fires, the header says how long against what the step may take: a step
    that saves is not overdue 5 min in when saves took 30 min, and then its words say so."""
    model = slow_saver(149, 1000.0)
    allowance = phase_allowance(model)
    assert allowance is not None and allowance.words == "a save 30 min"
    assert overdue_words(model.last_step_at, model.sec_per_it, 1000.0 + 5 * 60, allowance) is None
    assert (overdue_words(model.last_step_at, model.sec_per_it, 1000.0 + 40 * 60, allowance)
            == "no step for 40 min (a step takes 1 min, a save 30 min)")
    plain = slow_saver(147, 1000.0)
    assert phase_allowance(plain) is None
    assert overdue_words(plain.last_step_at, plain.sec_per_it, 1000.0 + 5 * 60, None) == \
        "no step for 5 min (a step takes 1 min)"
