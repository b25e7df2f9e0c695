"""Did the run crash? Failures judged against where the steps stopped and what followed them."""

from __future__ import annotations

import asyncio

import pytest

from tests.corpus import REPO, verl_log
from tui.session.feed import Feed
from tui.model.run_model import RunModel
from tui.rules.crash import WENT_ON_BYTES, also_lines, behind_rank, judge_failures
from tui.sources.local_file import LocalFile

STEPS = b"".join(b"step:%d - critic/score/mean:0.5 - timing_s/step:10\n" % n for n in range(1, 4))
TRACEBACK = (b"Traceback (most recent call last):\n  File \"reward.py\", line 9, in score\n"
             b"    return judge(answer)\nRuntimeError: judge server timed out\n")
# What a verbose reward function prints for every sample it scores (seed 001's CoLA prints).
FIXTURES = REPO / "tests" / "fixtures" / "logs"
CHATTER = ("=" * 80 + "\n[模型思考过程为]\nthe sentence is acceptable because the verb agrees\n").encode()


def judged(tmp_path, text: bytes):
    log = tmp_path / "run.log"
    log.write_bytes(text)
    model = RunModel()
    asyncio.run(Feed(LocalFile(log), model).run(follow=False))
    return judge_failures(model)


def test_a_traceback_after_the_last_step_is_the_crash(tmp_path):
    found = judged(tmp_path, STEPS + TRACEBACK + CHATTER * 10)
    assert found.cause is not None and found.cause.text == "RuntimeError: judge server timed out"
    assert found.cause.step == 3 and not found.survived


def test_a_traceback_the_steps_went_on_after_was_survived(tmp_path):
    found = judged(tmp_path, STEPS + TRACEBACK + b"step:4 - critic/score/mean:0.6\n")
    assert found.cause is None and [f.step for f in found.survived] == [3]


def test_a_process_that_printed_on_for_long_after_a_traceback_lived_through_it(tmp_path):
    # The next step is not out yet, but the reward function has printed 128 KiB+ since:
    # its error was handled; the stall rule, not the crash rule, says if the run hangs.
    went_on = CHATTER * (WENT_ON_BYTES // len(CHATTER) + 2)
    assert judged(tmp_path, STEPS + TRACEBACK + went_on).cause is None
    # A process that dies of an OOM is dead however much its neighbours print after.
    oom = verl_log("018").read_bytes() + b"\n"
    assert judged(tmp_path, STEPS + oom + went_on).cause.kind == "oom"


def test_the_cause_is_the_failure_that_says_why_a_process_died(tmp_path):
    killed = b"run.sh: line 12: 4242 Killed                  python3 -m verl.trainer.main_ppo\n"
    found = judged(tmp_path, STEPS + TRACEBACK + killed)
    assert found.cause.kind == "killed" and len(found.fatal) == 2


def test_an_exception_python_ignored_is_no_failure(tmp_path):
    ignored = b"Exception ignored in: <function Worker.__del__ at 0x7f00>\n" + TRACEBACK
    assert judged(tmp_path, STEPS + ignored).cause is None


def test_the_same_error_the_run_went_on_after_twice_is_presumed_survived_again(tmp_path):
    step = b"step:%d - critic/score/mean:0.5\n"
    text = STEPS + TRACEBACK + step % 4 + TRACEBACK + step % 5 + TRACEBACK
    found = judged(tmp_path, text)
    assert found.cause is not None and found.recurring == 2


def _stamped(data: bytes) -> bytes:
    """``data`` as ``kubectl logs --timestamps`` prints it: a collector's time on every line."""
    return b"".join(b"2025-08-08T12:%02d:%02d.123456789Z %s" % (i // 60 % 60, i % 60, line)
                    for i, line in enumerate(data.splitlines(keepends=True)))


def _labelled(data: bytes, label: bytes = b" 0: ") -> bytes:
    """``data`` as ``srun --label`` relays it (the task's number in front of every line), or
    as a Markdown reply quotes it (``> ``)."""
    return b"".join(label + line for line in data.splitlines(keepends=True))


@pytest.mark.parametrize("name", [
    "crashes/verl2987_taskrunner_unhandled_error_actordied_tab_fields_prefixed.log",
    "crashes/llamacookbook567_rank_prefixed_nccl_watchdog_cpp_frames.log",
    "crashes/easyr1_9_after_step13_runner_prefixed_unhandled_error_update_actor.log",
    "wild/slime1767_driver_raytaskerror_outofmemoryerror_megatron_train_cut.log",
    "crashes/coquistt2238_slurm_exceeded_job_memory_limit_cancelled_then_one_more_line.log",
    "generated/trl/grpo_enospc_checkpoint.log",
    "generated/trl/grpo_segfault_faulthandler.log",
])
def test_a_log_a_collector_stamped_line_by_line_is_judged_as_the_plain_one(tmp_path, name):
    data = (FIXTURES / name).read_bytes()
    plain = judged(tmp_path, data)
    assert plain.cause is not None
    for copy in (_stamped(data), _labelled(data), _labelled(data, b"> ")):
        relayed = judged(tmp_path, copy)
        assert relayed.cause is not None
        assert (relayed.cause.kind, relayed.cause.text, relayed.cause.step) == (
            plain.cause.kind, plain.cause.text, plain.cause.step)


_SLURM_MEMORY = (FIXTURES / "crashes" / "coquistt2238_slurm_exceeded_job_memory_limit_cancelled_then_one_more_line.log")


def test_slurms_memory_kill_names_the_crash_over_the_cancelled_job(tmp_path):
    data = _SLURM_MEMORY.read_bytes()
    found = judged(tmp_path, STEPS + data)
    assert found.cause.kind == "oom" and "exceeded memory limit" in found.cause.text
    # Without its reason the job's CANCELLED line is what is left to name it.
    without = b"".join(line for line in data.splitlines(keepends=True) if b"being killed" not in line)
    found = judged(tmp_path, STEPS + without)
    assert found.cause.kind == "killed" and "CANCELLED AT" in found.cause.text


def test_slurms_memory_warning_after_a_finished_run_is_no_crash(tmp_path):
    finished = (FIXTURES / "generated" / "trl" / "grpo_finished.log").read_bytes()
    warning = b"slurmstepd: error: Exceeded job memory limit at some point.\n"
    assert judged(tmp_path, finished + warning).cause is None


# -- the failure classes of issue 31, by grammar -------------------------------------------

RAY = FIXTURES / "generated" / "ray" / "ray_05_taskrunner_sigkill_hydra.log"
DDP = FIXTURES / "generated" / "ddp"


def _until_raylet(pid: bytes | None = None) -> bytes:
    """ray_05's log up to and including the raylet's report of the TaskRunner's death (its
    last line while Ray had not yet told the driver); ``pid`` puts another in the report."""
    lines = RAY.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if b"A worker died or was killed" in line)
    data = b"\n".join(lines[: at + 1]) + b"\n"
    return data if pid is None else data.replace(b"Worker PID: 16672", b"Worker PID: " + pid)


def test_the_raylet_reporting_the_death_of_the_process_printing_the_steps_ends_the_run(tmp_path):
    data = _until_raylet()
    assert b"(TaskRunner pid=16672)" in data and b"step:2 - " in data  # the trainer's own pid
    found = judged(tmp_path, data)
    assert found.cause is not None and found.cause.kind == "actor-died"
    assert found.cause.text.startswith("A worker died or was killed")
    assert (found.where.pid, found.where.host) == (16672, "192.0.2.2")  # its Worker PID and IP


def test_the_raylet_reporting_another_workers_death_is_survivable(tmp_path):
    found = judged(tmp_path, _until_raylet(pid=b"18444"))
    assert found.cause is None and [f.kind for f in found.survived] == ["actor-died"]


def test_a_device_assert_is_named_by_its_exception_and_its_thread_lines_fold_into_one(tmp_path):
    found = judged(tmp_path, (DDP / "nccl_rank1_device_assert.log").read_bytes())
    assert found.cause.text == "torch.AcceleratorError: CUDA error: device-side assert triggered"
    assert found.where.rank == 1
    also = also_lines(found, 3, 160)
    asserts = [line for line in also if "Assertion `" in line]
    assert len(asserts) == 1 and asserts[0].endswith("(×128)"), also
    assert "thread: [0,0,0]" in asserts[0]  # the first of them, a count for the rest
    assert len(asserts[0]) == 160 + len(" (×128)")  # cut, its count kept


@pytest.mark.parametrize(("name", "rank", "local_rank", "host", "says"), [
    ("gloo_rank1_raise.log", 1, 1, "localhost", "RuntimeError: reward worker returned"),
    ("gloo_rank1_sigkill.log", 1, 1, "localhost", "Signal 9 (SIGKILL) received by PID 27715"),
    ("nccl_rank1_sigkill.log", 1, 1, "localhost", "Signal 9 (SIGKILL) received by PID 957"),
    ("nccl_rank1_hang_timeout.log", 0, 0, "localhost", "Watchdog caught collective operation timeout"),
    ("slurm_rank1_raise.log", 1, None, "localhost", "RuntimeError: reward worker returned"),
])
def test_a_multi_process_crash_names_the_rank_and_host_that_failed(tmp_path, name, rank, local_rank,
                                                                   host, says):
    found = judged(tmp_path, (DDP / name).read_bytes())
    assert found.cause is not None and says in found.cause.text
    assert (found.where.rank, found.where.local_rank, found.where.host) == (rank, local_rank, host)
    assert not found.survived  # the first signs of the same end are not errors "gone on after"


def test_a_collective_timeout_names_the_rank_that_never_reached_the_collective(tmp_path):
    # NCCL names the rank that waited (0); each rank's "Last enqueued NCCL work" says which
    # one it waited for (rank 1, asleep before its all-reduce: 9 against 10).
    found = judged(tmp_path, (DDP / "nccl_rank1_hang_timeout.log").read_bytes())
    assert found.where.rank == 0
    assert behind_rank(found) == "rank 1 never reached the collective (last enqueued NCCL work 9, the others 10)"
    # One rank's account alone, or ranks that agree, say nothing of who is behind.
    assert behind_rank(judged(tmp_path, (DDP / "gloo_rank1_hang_timeout.log").read_bytes())) == ""
