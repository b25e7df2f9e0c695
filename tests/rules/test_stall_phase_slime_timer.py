"""A stalled slime run names the part of its step its own timer says it is in: a timer that
started and did not end. The logs are composed from slime's grammar (tui/parsers/kin/slime.py
for the step lines; ``slime/observability/timer.py`` for the timers, in the order slime's
``train.py`` and its Megatron actor run them: the rollout manager's ``perf N``, the trainer's
data, its ``train`` holding ``log_probs`` and ``actor_train``, its ``perf N``, then the weights'
push to SGLang), plus THUDM/slime issue #1487's own lines."""

from __future__ import annotations

from pathlib import Path

from tests.support import hang_model
from tui.model.run_model import RunModel
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import load_rules
from tui.rules.stall_explanation import LogLine, StepTiming, explain_stall
from tui.rules.stall_phase import StallPhase, stall_phase

KIN = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "kin"
WRITTEN = 2_000_000_000.0
AN_HOUR = 3600.0


def timer(name: str, what: str = "start") -> str:
    """slime's timer line on the trainer's rank 0, behind its logger header and Ray's prefix."""
    return f"(MegatronTrainRayActor pid=1234) [2025-11-20 10:00:00] timer.py:24 - Timer {name} {what}\n"


def ended(name: str) -> str:
    return timer(name, "end (elapsed: 3.2s)")


def rollout_done(n: int) -> str:
    """The rollout manager's ``perf N`` at the end of rollout N."""
    return (f"(RolloutManager pid=99) [2025-11-20 10:00:00] rollout.py:1193 - perf {n}: "
            f"{{'rollout/response_len/mean': 2773.7, 'perf/rollout_time': 30.0}}\n")


def training(n: int) -> str:
    """The trainer's part of rollout N up to its optimizer's step line."""
    return (timer("data_preprocess") + ended("data_preprocess") + ended("train_wait") + timer("train")
            + timer("log_probs") + ended("log_probs") + timer("actor_train")
            + f"(MegatronTrainRayActor pid=1234) [2025-11-20 10:00:00] model.py:600 - step {n}: "
              f"{{'train/loss': 0.1, 'train/grad_norm': 1.5}}\n")


def trained(n: int) -> str:
    """The rest of the trainer's rollout N: its timers' ends, its ``perf N``, the weights' push."""
    return (ended("actor_train") + ended("train") + timer("train_wait")
            + f"(MegatronTrainRayActor pid=1234) [2025-11-20 10:00:00] train_metric_utils.py:90 - perf {n}: "
              f"{{'perf/train_wait_time': 30.0, 'perf/train_time': 30.0, 'perf/step_time': 60.0}}\n"
            + timer("update_weights") + ended("update_weights"))


RUN = "".join(rollout_done(n) + training(n) + trained(n) for n in range(5))


def model_of(tmp_path: Path, text: str) -> RunModel:
    log = tmp_path / "slime.log"
    log.write_text(text, encoding="utf-8")
    return hang_model(log, WRITTEN)


def phase_after(tmp_path: Path, text: str) -> StallPhase:
    return stall_phase(model_of(tmp_path, RUN + text))


def test_a_run_stuck_in_training_says_so_with_the_timer_line_as_evidence(tmp_path: Path):
    model = model_of(tmp_path, RUN + rollout_done(5) + timer("data_preprocess") + ended("data_preprocess")
                     + ended("train_wait") + timer("train") + timer("actor_train"))
    (finding,) = [f for f in RuleEngine(load_rules()).evaluate(model, WRITTEN + AN_HOUR) if f.rule == "stalled"]
    assert finding.message.split(";")[0].endswith("(typical step 1 min), in training")
    assert "last phase line `Timer actor_train start`" in finding.message
    # slime's perf line times its train timer: what training took before
    assert "the last training took 30 s (perf/train_time at step 4); this step has waited 1 h 00 min" in finding.message


def test_the_why_view_names_training_at_the_timer_lines_byte_and_what_training_took_before(tmp_path: Path):
    model = model_of(tmp_path, RUN + rollout_done(5) + ended("train_wait") + timer("train") + timer("actor_train"))
    limits = next(rule for rule in load_rules() if rule.kind == "stalled").params
    _, where, before = explain_stall(model, WRITTEN + AN_HOUR, limits=limits).items
    assert where.says == "where: in training, by the last line since step 5 that names a phase"
    text = (tmp_path / "slime.log").read_bytes()
    assert where.source == LogLine(model.log, text.rindex(b"(MegatronTrainRayActor"), "Timer actor_train start")
    assert before.says == "the last training took 30 s (perf/train_time at step 4); this step has waited 1 h 00 min"
    assert before.source == StepTiming("perf/train_time", None, 4)


def test_issue_1487_a_hang_after_actor_train_started_is_in_training():
    """The user's three lines: the rollout's metrics, then ``Timer actor_train start``, then
    only SGLang's health pings for hours."""
    model = hang_model(KIN / "slime1487_rollout16_passrate_user_elided_dicts_timer_actor_train_start_hang.log",
                       WRITTEN)
    phase = stall_phase(model)
    assert model.last_step == 16
    assert (phase.phase, phase.line, phase.words()) == ("training", "Timer actor_train start", "in training")
    (finding,) = [f for f in RuleEngine(load_rules()).evaluate(model, WRITTEN + 2 * AN_HOUR) if f.rule == "stalled"]
    assert finding.message.split(";")[0] == "nothing written for 2 h 00 min after step 16, in training"
    assert "last phase line `Timer actor_train start` (at byte 201)" in finding.message


def test_a_push_of_the_weights_that_never_ends_is_the_weight_sync(tmp_path: Path):
    phase = phase_after(tmp_path, rollout_done(5) + training(5) + trained(5)[:-len(ended("update_weights"))])
    assert phase.phase == "weight-sync" and phase.line == "Timer update_weights start"
    assert phase.words() == "syncing weights to the rollout engine"


def test_a_save_that_never_ends_is_the_checkpoint(tmp_path: Path):
    text = rollout_done(5) + training(5) + ended("actor_train") + ended("train") + timer("train_wait")
    text += ("(MegatronTrainRayActor pid=1234) [2025-11-20 10:00:00] train_metric_utils.py:90 - perf 5: "
             "{'perf/step_time': 60.0}\n") + timer("save_model")
    phase = phase_after(tmp_path, text)
    assert (phase.phase, phase.line, phase.words()) == ("checkpoint", "Timer save_model start", "saving a checkpoint")


def test_a_timer_that_ended_with_none_other_under_way_leaves_the_phase_unknown(tmp_path: Path):
    """After the weights' push the rollout runs in SGLang: the trainer's timers say nothing of it."""
    phase = phase_after(tmp_path, "")
    assert phase.phase is None and phase.ended and phase.words() == "where: unknown"
    assert ("the last phase line says its phase ended: `Timer update_weights end (elapsed: 3.2s)`"
            in phase.evidence(AN_HOUR))


def test_a_timer_inside_another_that_ended_leaves_the_outer_one_under_way(tmp_path: Path):
    """``train`` holds ``log_probs``: the run is still training once ``log_probs`` ended."""
    text = rollout_done(5) + ended("train_wait") + timer("train") + timer("log_probs") + ended("log_probs")
    phase = phase_after(tmp_path, text)
    assert (phase.phase, phase.line) == ("training", "Timer train start")
    assert phase_after(tmp_path, text + ended("train")).phase is None


def test_a_timer_started_before_the_last_step_line_is_that_steps(tmp_path: Path):
    """``train_wait`` starts before the trainer's ``perf N``: the step under way did not start it."""
    model = model_of(tmp_path, RUN)
    assert [p.timer for p in model.phases_since_last_step()] == ["update_weights", "update_weights"]
