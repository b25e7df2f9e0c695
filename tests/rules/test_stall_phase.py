"""A stall says where it stopped: on logs of real runs stuck in one phase of a step
(tests/fixtures/logs/generated/hangs, made by make/phase_hang.py: a checkpoint written into a
FIFO nobody reads, a validation's reward waiting on a lock), and on a hang no line explains."""

from __future__ import annotations

import json
import os
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from tests.support import hang_model, rlwatch
from tui.model.run_model import RunModel
from tui.parsers.stall_evidence import match_phase
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import load_rules
from tui.rules.stall_phase import stall_phase

HANGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "generated" / "hangs"
DDP = HANGS.parent / "ddp"
WRITTEN = 2_000_000_000.0
AN_HOUR = 3600.0


def model_of(log: Path) -> RunModel:
    return hang_model(log, WRITTEN)


def stalled(model: RunModel):
    (finding,) = [f for f in RuleEngine(load_rules()).evaluate(model, WRITTEN + AN_HOUR) if f.rule == "stalled"]
    return finding


def test_a_save_that_blocks_is_named_with_its_line_and_schedule():
    model = model_of(HANGS / "save_blocked_at_step8_still_hanging.log")
    phase = stall_phase(model)
    assert phase.phase == "checkpoint" and phase.line.endswith("/global_step_8")
    assert phase.scheduled == ("step 8 saves a checkpoint (trainer.save_freq=4)",)
    assert phase.before is not None and phase.before.key == "timing_s/save_checkpoint"
    assert phase.before.last_step == 4
    message = stalled(model).message
    assert message.split(";")[0] == "no new step for 1 h 00 min after step 7 (typical step under 1 s), saving a checkpoint"
    assert "local_global_step_folder: /tmp/" in message and "the last save took under 1 s" in message
    assert "this step has waited 1 h 00 min" in message


def test_a_validation_that_never_ends_is_in_validation():
    model = model_of(HANGS / "validation_reward_lock_at_step9_still_hanging.log")
    phase = stall_phase(model)
    assert phase.phase == "validation" and phase.line.startswith("test_gen_batch meta info: {")
    assert phase.scheduled == ("step 9 validates (trainer.test_freq=3)",)
    assert phase.before is not None and phase.before.key == "timing_s/testing" and phase.before.last_step == 6
    assert stalled(model).message.split(";")[0].endswith("(typical step under 1 s), in validation")


def test_the_phases_of_earlier_steps_are_not_this_ones():
    """Steps 3, 4 and 6 validated and saved; the lines before their step lines are theirs."""
    model = model_of(HANGS / "save_blocked_at_step8_still_hanging.log")
    assert [p.kind for p in model.phases] == ["validation", "checkpoint", "validation", "checkpoint"]
    assert [p.kind for p in model.phases_since_last_step()] == ["checkpoint"]


def test_a_hang_no_line_explains_is_unknown():
    """Rank 1 asleep before step 5's all-reduce: nothing after step 4 says a phase."""
    model = model_of(DDP / "nccl_rank1_hang_still_hanging.log")
    assert stall_phase(model).phase is None
    message = stalled(model).message
    assert message.split(";")[0].endswith(", where: unknown")
    assert "no line since the last step names a phase" in message


def test_a_setting_that_schedules_nothing_is_not_a_schedule(tmp_path: Path):
    log = tmp_path / "run.log"
    log.write_text("(TaskRunner pid=7) {'trainer': {'save_freq': -1, 'test_freq': 'null'}}\n"
                   + "".join(f"step:{s} - timing_s/step:1.0\n" for s in range(1, 10)))
    assert stall_phase(model_of(log)).scheduled == ()


def test_check_names_the_phase_in_text_and_json(tmp_path: Path):
    log = tmp_path / "run.log"
    log.write_bytes((HANGS / "save_blocked_at_step8_still_hanging.log").read_bytes())
    hour_ago = log.stat().st_mtime - AN_HOUR
    os.utime(log, (hour_ago, hour_ago))
    text = rlwatch("check", str(log))
    assert "saving a checkpoint" in text.stdout and "global_step_8" in text.stdout
    # the printed config is read for a run that may stall: its schedule is in the evidence
    assert "step 8 saves a checkpoint (trainer.save_freq=4)" in text.stdout
    done = rlwatch("check", str(log), "--json")
    (finding,) = [f for f in json.loads(done.stdout)["findings"] if f["rule"] == "stalled"]
    assert "saving a checkpoint; the run may be hung or dead" in finding["message"]


def hang_samples() -> list[tuple[Path, dict]]:
    """Every recorded hang whose reader wrote the phase its stall names (``stall``)."""
    return [(folder, sample) for folder in (HANGS, DDP)
            for sample in tomllib.loads((folder / "expected.toml").read_text(encoding="utf-8"))["sample"]
            if "stall" in sample]


def test_each_recorded_hang_names_the_phase_its_reader_expects():
    samples = hang_samples()
    assert {folder for folder, _ in samples} == {HANGS, DDP}
    for folder, sample in samples:
        message = stalled(model_of(folder / sample["file"])).message
        assert message.split(";")[0].endswith(", " + sample["stall"]), sample["file"]


def test_a_reward_server_that_never_answers_is_a_request_being_retried():
    """openai's retries after step 5, though step 6 is also a validation step by the schedule:
    the line says what the run is doing, the schedule only what it was due to do."""
    model = model_of(HANGS / "reward_judge_retrying_at_step6_still_hanging.log")
    phase = stall_phase(model)
    assert phase.phase == "request-retry" and phase.line.endswith("(retry 5 of 1000)")
    assert phase.scheduled == ("step 6 validates (trainer.test_freq=3)",) and phase.before is None
    assert len(model.phases_since_last_step()) == 5


def test_a_retry_in_prose_is_no_phase():
    assert match_phase("the model said: Retrying request later might help", 0) is None
    old_client = match_phase("INFO:openai._base_client:Retrying request to /chat/completions in 0.4 seconds", 7)
    assert old_client is not None and old_client.offset == 7 and old_client.kind == "request-retry"


# NeMo-RL's step 4 in pmotgi/nemo-rl-on-gke (tests/fixtures/logs/kin/nemorl_gke_llama8b_readme_step4_of_100.log),
# in order: vLLM's weights woken (the sync begins), its KV cache woken (generation begins), the
# generation bars, an engine put back to sleep.
WOKEN_WEIGHTS = ("(VllmGenerationWorker pid=8299, ip=10.4.28.6) INFO 01-21 04:17:06 [executor_base.py:203] "
                 "It took 0.614081 seconds to wake up tags ['weights'].\n")
WOKEN_CACHE = ("(VllmGenerationWorker pid=8299, ip=10.4.28.6) INFO 01-21 04:17:09 [executor_base.py:203] "
               "It took 0.077505 seconds to wake up tags ['kv_cache'].\n")
ASLEEP = ("(VllmGenerationWorker pid=8861, ip=10.4.2.9) INFO 01-21 04:18:03 [executor_base.py:187] "
          "It took 1.018574 seconds to fall asleep.\n")
STEPS = "".join(f"step:{s} - timing_s/step:1.0 - timing_s/gen:0.5\n" for s in range(1, 5))


def vllm_stats(engine: str, running: int, waiting: int = 0) -> str:
    """vLLM V1's stats line (vllm/v1/metrics/loggers.py) as verl's server actor relays it."""
    return (f"(vLLMHttpServer pid=7) INFO 11-28 10:00:00 [loggers.py:123] Engine {engine}: Avg prompt "
            f"throughput: 0.0 tokens/s, Avg generation throughput: {running * 9}.0 tokens/s, Running: "
            f"{running} reqs, Waiting: {waiting} reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%\n")


def phase_after(tmp_path: Path, text: str):
    log = tmp_path / "run.log"
    log.write_text(text, encoding="utf-8")
    return stall_phase(model_of(log))


def test_a_stall_after_the_weights_woke_is_the_weight_sync(tmp_path: Path):
    phase = phase_after(tmp_path, STEPS + WOKEN_WEIGHTS)
    assert phase.phase == "weight-sync" and phase.line.endswith("wake up tags ['weights'].")
    assert phase.words() == "syncing weights to the rollout engine"


def test_a_stall_after_the_cache_woke_is_the_rollout_with_what_generation_took_before(tmp_path: Path):
    phase = phase_after(tmp_path, STEPS + WOKEN_WEIGHTS + WOKEN_CACHE)
    assert phase.phase == "rollout" and phase.words() == "in rollout (generation)"
    assert phase.before is not None and phase.before.key == "timing_s/gen" and phase.before.last_step == 4
    assert "the last generation took under 1 s" in phase.evidence(3600.0)


def test_an_engine_put_to_sleep_ends_the_rollout_and_the_phase_is_unknown(tmp_path: Path):
    phase = phase_after(tmp_path, STEPS + WOKEN_WEIGHTS + WOKEN_CACHE + ASLEEP)
    assert phase.phase is None and phase.ended and phase.words() == "where: unknown"
    assert "the last phase line says its phase ended: `It took 1.018574 seconds to fall asleep.`" in phase.evidence(1.0)


def test_the_engines_progress_before_the_last_step_is_that_steps(tmp_path: Path):
    """A healthy step prints the engine's progress before its step line: none of it is the next step's."""
    text = "".join(vllm_stats("000", 12) + f"step:{s} - timing_s/step:1.0\n" for s in range(1, 6))
    assert phase_after(tmp_path, text).phase is None


def test_one_engine_done_while_another_is_silent_mid_generation_is_still_the_rollout(tmp_path: Path):
    """Data-parallel engines: the stuck one goes quiet with requests running, the others say
    they are done after it. The rollout waits on the quiet one."""
    text = STEPS + vllm_stats("000", 8) + vllm_stats("001", 8) + vllm_stats("000", 0) + vllm_stats("001", 3)
    text += vllm_stats("000", 0)  # engine 000 repeats nothing (vLLM says idle once), but its last word stands
    phase = phase_after(tmp_path, text)
    assert phase.phase == "rollout" and "Engine 001:" in phase.line and "Running: 3 reqs" in phase.line
    every_engine_done = phase_after(tmp_path, text + vllm_stats("001", 0))
    assert every_engine_done.phase is None and every_engine_done.ended


def test_a_collective_timeout_is_a_crash_not_a_stall_whatever_nccl_said_before():
    """NCCL's AllReduce line, then the watchdog: a crash, rank 0 named (the stall rule is quiet)."""
    model = model_of(DDP / "nccl_debug_coll_rank1_hang_timeout.log")
    findings = RuleEngine(load_rules()).evaluate(model, WRITTEN + AN_HOUR)
    assert not [f for f in findings if f.rule == "stalled"]
    (crash,) = [f for f in findings if f.rule == "crash"]
    assert "Watchdog caught collective operation timeout" in crash.message and "Rank 0]" in crash.message


def sglang_reload(rank: int, end: bool = False) -> str:
    """SGLang's weight reload as each tensor-parallel rank logs it (model_runner.py's
    ``update_weights_from_disk``), behind its engine's Ray prefix."""
    said = "Update weights end." if end else "Update engine weights online from disk begin. avail mem=61.52 GB"
    return f"(SGLangEngine pid=17467) [2025-10-13 10:00:0{rank} TP{rank}] {said}\n"


def test_one_sglang_rank_still_loading_its_weights_while_the_others_are_done_is_the_weight_sync(tmp_path: Path):
    """Each rank loads its own shard and says when it is done: the run waits on the one that has
    not said so, not on nothing because the last line is another rank's end."""
    begun = "".join(sglang_reload(rank) for rank in range(4))
    ended = "".join(sglang_reload(rank, end=True) for rank in (0, 1, 3))
    phase = phase_after(tmp_path, STEPS + begun + ended)
    assert phase.phase == "weight-sync" and phase.line.startswith("[2025-10-13 10:00:02 TP2] Update engine")
    every_rank_done = phase_after(tmp_path, STEPS + begun + ended + sglang_reload(2, end=True))
    assert every_rank_done.phase is None and every_rank_done.ended
