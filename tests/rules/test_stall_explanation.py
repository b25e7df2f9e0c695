"""The "why is it stuck" items, each with its source, on logs of real hung runs
(tests/fixtures/logs/generated/hangs: a checkpoint written into a FIFO nobody reads, an
OpenAI-compatible judge nobody answers; ddp: an all-reduce rank 1 never joined, with the two
H200s' nvidia-smi readings taken while it hung)."""

from __future__ import annotations

from dataclasses import replace

from tests.rules.test_process_activity import with_recording
from tests.support import DDP, HANGS, hang_model, hang_readings, history_of
from tui.model.processes import LOG_ORIGIN
from tui.parsers.records import JobOutcome, JobRecord
from tui.rules.rule_file import load_rules
from tui.rules.stall_explanation import (
    FINISHED,
    MOVING,
    OVERDUE,
    QUEUED,
    STALLED,
    TAIL_LINES,
    AcceleratorReading,
    ConfigSetting,
    LogLine,
    LogSpan,
    ProcessEntry,
    StepTiming,
    explain_stall,
)

WRITTEN = 2_000_000_000.0
LIMITS = next(rule for rule in load_rules() if rule.kind == "stalled").params
SAVE_BLOCKED = HANGS / "save_blocked_at_step8_still_hanging.log"
SAVE_LINE = b"(TaskRunner pid=5642) local_global_step_folder: /tmp/tmp.JSDJq71WJg/save_blocked_at_step8/global_step_8"


def says(explained) -> list[str]:
    return [item.says for item in explained.items]


def test_a_blocked_save_is_told_item_by_item_with_where_each_was_read():
    model = hang_model(SAVE_BLOCKED, WRITTEN)
    explained = explain_stall(model, WRITTEN + 3600, limits=LIMITS)
    assert explained.state == STALLED
    assert explained.headline == "stalled: no new step for 1 h 00 min after step 7"
    silence, where, save, test, before = explained.items
    assert silence.says == ("no new step for 1 h 00 min after step 7; a step takes under 1 s; stalled past "
                            "10 min: the rule's floor (min_seconds=600); 5 typical steps are 1 s")
    assert silence.source == StepTiming("timing_s/step", 1, 7, 7)
    assert where.says == "where: saving a checkpoint, by the last line since step 7 that names a phase"
    assert where.source == LogLine(str(SAVE_BLOCKED), SAVE_BLOCKED.read_bytes().index(SAVE_LINE),
                                   SAVE_LINE.decode().split(") ", 1)[1])
    assert where.source.words() == ("save_blocked_at_step8_still_hanging.log, byte 1,794: "
                                    "local_global_step_folder: /tmp/tmp.JSDJq71WJg/save_blocked_at_step8/global_step_8")
    assert (save.says, save.source) == ("step 8 saves a checkpoint (trainer.save_freq=4)",
                                        ConfigSetting("trainer.save_freq", "4"))
    assert (test.says, test.source) == ("step 8 is not a validation step (trainer.test_freq=3)",
                                        ConfigSetting("trainer.test_freq", "3"))
    assert before.says == ("the last save took under 1 s (timing_s/save_checkpoint at step 4); "
                           "this step has waited 1 h 00 min")
    assert before.source == StepTiming("timing_s/save_checkpoint", None, 4)
    assert [item.source.kind for item in explained.items] == [
        "earlier steps' timing", "log line", "config", "config", "earlier steps' timing"]


def test_before_the_limit_the_run_is_overdue_and_told_when_it_will_be_stalled():
    model = hang_model(SAVE_BLOCKED, WRITTEN)
    explained = explain_stall(model, WRITTEN + 120, limits=LIMITS)
    assert (explained.state, explained.headline) == (
        OVERDUE, "overdue, not stalled yet: no new step for 2 min after step 7")
    assert explained.items[0].says.endswith("stalled only past 10 min: the rule's floor (min_seconds=600); "
                                            "5 typical steps are 1 s")


def test_a_run_that_just_stepped_is_moving_and_nothing_is_listed():
    explained = explain_stall(hang_model(SAVE_BLOCKED, WRITTEN), WRITTEN + 5, limits=LIMITS)
    assert (explained.state, explained.headline, explained.items) == (
        MOVING, "the run is moving: step 7 came 5 s ago", ())


def test_which_bound_set_the_limit_is_said():
    model = hang_model(SAVE_BLOCKED, WRITTEN)
    by_steps = explain_stall(model, WRITTEN + 3600, limits={**LIMITS, "min_seconds": 0.0}).items[0].says
    assert by_steps.endswith("stalled past 1 s: 5 typical steps (factor)")
    # A save of 0.0004 s taken as if a step may run 10,000,000 of them: 1 h 06 min.
    by_phase = explain_stall(model, WRITTEN + 7200, limits={**LIMITS, "min_seconds": 0.0,
                                                            "phase_factor": 1e7}).items[0].says
    assert by_phase.endswith("stalled past 1 h 06 min: a step plus 1e+07× the slowest of its slow phases "
                             "(a save under 1 s)")
    capped = explain_stall(model, WRITTEN + 3600, limits={**LIMITS, "factor": 1e6, "max_seconds": 60.0})
    assert capped.items[0].says.endswith("stalled past 1 min: the rule's ceiling (max_seconds=60)")


def test_a_hang_no_line_explains_is_unknown_and_each_gpu_says_what_it_did():
    """Rank 1 asleep before step 5's all-reduce: no phase line; GPU 0 spins in it, GPU 1 idles."""
    model = hang_model(DDP / "nccl_rank1_hang_still_hanging.log", WRITTEN)
    history = history_of(hang_readings(), WRITTEN + 3000)
    explained = explain_stall(model, WRITTEN + 3600, limits=LIMITS, accelerators=history)
    assert explained.state == STALLED
    where = explained.items[1]
    assert where.says == "where: unknown: no line since step 4 names a phase"
    assert where.source == LogSpan(model.log, 468, 468)
    assert where.source.words() == "nccl_rank1_hang_still_hanging.log, nothing after byte 468"
    gpu0, gpu1, both = explained.items[-3:]
    assert gpu0.says.startswith("localhost:0 busy with flat power and memory (waiting in a collective?)")
    assert gpu1.says == "localhost:1 idle (0 %, 123 W, 1663 MiB; 2 readings)"
    assert gpu0.source == AcceleratorReading((("localhost", 0),), 2, WRITTEN + 3000, WRITTEN + 3011, WRITTEN + 3600)
    assert gpu1.source.words() == "localhost GPU 1: 2 readings over 11 s, the last 9 min ago"
    assert both.says.startswith("some spin in a collective while others are idle")
    assert both.source == AcceleratorReading((("localhost", 0), ("localhost", 1)), 4,
                                             WRITTEN + 3000, WRITTEN + 3011, WRITTEN + 3600)


def test_gpus_read_only_before_the_last_step_say_nothing():
    model = hang_model(DDP / "nccl_rank1_hang_still_hanging.log", WRITTEN)
    history = history_of(hang_readings(), WRITTEN - 600)
    explained = explain_stall(model, WRITTEN + 3600, limits=LIMITS, accelerators=history)
    assert not any(isinstance(item.source, AcceleratorReading) for item in explained.items)


def test_the_last_lines_since_the_step_are_items_at_their_bytes():
    """openai's retries to a judge nobody answers: the phase and the log's last lines."""
    log = HANGS / "reward_judge_retrying_at_step6_still_hanging.log"
    model = hang_model(log, WRITTEN)
    data = log.read_bytes()
    start = model.last_step_line_end
    lines, at = [], start
    for line in data[start:].split(b"\n"):
        lines.append((at, line.decode()))
        at += len(line) + 1
    explained = explain_stall(model, WRITTEN + 3600, limits=LIMITS, tail=[*lines[:2], (at, "   ")])
    assert explained.items[1].says.startswith("where: retrying a request to a server")
    tail = explained.items[-2:]
    kept = [(offset, text) for offset, text in lines[:2] if text.strip()]
    assert [(item.source, item.says) for item in tail] == [(LogLine(model.log, offset), text)
                                                           for offset, text in kept][-2:]
    every = explain_stall(model, WRITTEN + 3600, limits=LIMITS, tail=lines)
    shown = [item for item in every.items if isinstance(item.source, LogLine) and not item.source.text]
    # The last retry is the phase's own line, quoted by the "where" item: not shown again.
    assert [item.says for item in shown] == [f"INFO:openai._base_client:Retrying request in {wait} seconds "
                                             f"(retry {n} of 1000)" for n, wait in enumerate(
                                                 ("0.421778", "0.863972", "1.781403", "3.326975"), 1)]
    assert every.items[1].source.offset == data.rindex(b"INFO:openai")
    assert all(item.source.offset != data.rindex(b"INFO:openai") for item in shown)
    more = explain_stall(model, WRITTEN + 3600, limits=LIMITS,
                         tail=lines + [(at + n, f"line {n}") for n in range(TAIL_LINES)]).items
    assert [item.says for item in more[-TAIL_LINES:]] == [f"line {n}" for n in range(TAIL_LINES)]
    assert not any(item.says.startswith("INFO:openai") for item in more)


def test_without_the_stall_rule_the_run_is_only_overdue():
    model = hang_model(SAVE_BLOCKED, WRITTEN)
    explained = explain_stall(model, WRITTEN + 3600, limits=None)
    assert explained.state == OVERDUE
    assert explained.items[0].says == "no new step for 1 h 00 min after step 7; a step takes under 1 s"


def test_a_run_silent_before_its_first_step_is_stalled_by_its_silence():
    model = hang_model(SAVE_BLOCKED, WRITTEN)
    model.reset()
    model.note_write(WRITTEN)
    model.read_to = 400
    explained = explain_stall(model, WRITTEN + 7200, limits=LIMITS, tail=[(0, "loading the model")])
    assert explained.headline == "stalled before its first step: nothing written for 2 h 00 min"
    assert says(explained) == ["no step yet and nothing written for 2 h 00 min: stalled after 1 h 00 min of "
                               "silence (quiet_seconds)", "loading the model"]
    quiet = explain_stall(model, WRITTEN + 60, limits=LIMITS)
    assert (quiet.state, quiet.headline) == (MOVING, "no step yet; the log was written 1 min ago")


def test_a_finished_run_or_a_job_the_scheduler_ended_waits_for_nothing():
    model = hang_model(SAVE_BLOCKED, WRITTEN)
    model.job = JobRecord("Slurm", "812", "TIMEOUT", JobOutcome.FAILED, "")
    assert (explain_stall(model, WRITTEN + 3600, limits=LIMITS).headline
            == "Slurm says the job is over (TIMEOUT): it waits for no step")
    model.job = JobRecord("Slurm", "812", "PENDING", JobOutcome.PENDING, "")
    assert explain_stall(model, WRITTEN + 3600, limits=LIMITS).state == QUEUED
    model.job = None
    model._own_end_seen = True
    assert explain_stall(model, WRITTEN + 3600, limits=LIMITS).state == FINISHED


def test_a_long_line_is_cut_and_its_source_names_the_file_only():
    model = hang_model(SAVE_BLOCKED, WRITTEN)
    (item,) = explain_stall(model, WRITTEN + 3600, limits=LIMITS, tail=[(1900, "x" * 1000)]).items[-1:]
    assert len(item.says) == 240 and item.says.endswith("…")
    assert replace(item.source, log="/deep/path/train.log").words() == "train.log, byte 1,900"


def test_a_stopped_trainer_is_an_item_read_from_its_proc_entry_with_what_it_means():
    """The trainer SIGSTOPped mid-run, its /proc read twice 3 s apart while it hung."""
    model = hang_model(HANGS / "stopped_mid_run_still_hanging.log", WRITTEN)
    (pid,) = with_recording(model, HANGS / "stopped_mid_run_proc.txt")
    explained = explain_stall(model, WRITTEN + 3600, limits=LIMITS)
    processes = [item for item in explained.items if item.source.kind == "process"]
    stopped, meaning = processes
    assert stopped.says.startswith(f"pid {pid} (python) stopped (T: SIGSTOP or ^Z), 0 % CPU over 3 s, up ")
    assert stopped.source == ProcessEntry("box", (pid,), LOG_ORIGIN)
    assert stopped.source.words() == f"/proc/{pid}/stat on box; the pid from {LOG_ORIGIN}"
    assert meaning.says == "a stopped process runs nothing until continued (kill -CONT), and the run waits on it"
    # The processes come after what the log and the devices say, before the log's last lines.
    kinds = [item.source.kind for item in explained.items]
    assert kinds.index("process") > kinds.index("earlier steps' timing")


def test_without_readings_of_its_processes_the_view_says_nothing_of_them():
    explained = explain_stall(hang_model(SAVE_BLOCKED, WRITTEN), WRITTEN + 3600, limits=LIMITS)
    assert "process" not in [item.source.kind for item in explained.items]
