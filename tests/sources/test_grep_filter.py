"""What grep looks for in a big log, and reading its -b output."""

import subprocess
import sys

from tests.corpus import REPO, all_verl_logs, verl_log
from tui.parsers import incidents
from tui.parsers.log_scanner import NEEDLES, LogScanner
from tui.parsers import stall_evidence
from tui.parsers.records import IncidentRecord, PhaseRecord
from tui.sources.grep_filter import (
    FORMS,
    GrepOutput,
    grep_command,
    grep_needles,
)


# Seed 001's workload: its reward function's chatter around a real run's step lines.
CHATTER = REPO / "bench" / "chatter_log.py"
# A line of each crash class as the software that prints it does, one per needle.
MARKER_LINES = {
    incidents.OOM: [
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate",
        "(raylet) Worker 12 was killed due to memory pressure (OOM)",
        "RuntimeError: [enforce fail at alloc_cpu.cpp:83] . DefaultCPUAllocator: can't allocate memory",
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed.",
        "srun: error: node107: task 0: Out Of Memory",
        "slurmstepd: error: Job 7518 exceeded memory limit (626359956 > 512000000), being killed",
    ],
    incidents.COLLECTIVE_TIMEOUT: [
        "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE)",
        "[Rank 3] Process group watchdog thread terminated with exception: NCCL error",
        "[Rank 3] Some NCCL operations have failed or timed out.",
        "[Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress",
        "[Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info.",
        "[Rank 0] Terminating the process after attempting to dump debug info, due to collective timeout.",
        "[PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from"
        " this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 9,"
        " last completed NCCL work: 9.",
    ],
    incidents.DEVICE_ERROR: [
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "RuntimeError: CUDA error: device-side assert triggered",
        "an illegal memory access was encountered",
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1289: block: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
        "EH9999: Inner Error!",
    ],
    incidents.ACTOR_DIED: [
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "The actor died unexpectedly before finishing this task.",
        "error: The actor is dead because its worker process has died.",
        "(raylet) A worker died or was killed while executing a task by an unexpected system error.",
    ],
    incidents.RAY_ERROR: [
        "Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::TaskRunner.run()",
        "ray.exceptions.RayTaskError(ValueError): ray::WorkerDict.actor_rollout_generate_sequences()",
        "ray.exceptions.RaySystemError: System error: Failed to unpickle serialized exception",
        "Job 'raysubmit_wXcPm1u8hGz3Qy2L' failed",
        "Job entrypoint command failed with exit code 1",
    ],
    incidents.EXITED: ["srun: error: node107: task 3: Exited with exit code 1"],
    incidents.HYDRA_ERROR: ["Error executing job with overrides: ['trainer.total_epochs=1']"],
    incidents.KILLED: [
        "run.sh: line 3: 12345 Killed                  python3 -m verl.trainer.main_ppo",
        "已杀死",
        "[launch.py:315:sigkill_handler] Killing subprocess 4242",
        "Terminated",
        "slurmstepd: error: *** JOB 494583 ON node12 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***",
        "  traceback : Signal 9 (SIGKILL) received by PID 10285",
    ],
    incidents.FATAL_SIGNAL: [
        "Segmentation fault (core dumped)",
        "Aborted (core dumped)",
        "Fatal Python error: Segmentation fault",
        "terminate called after throwing an instance of 'c10::Error'",
        "*** SIGSEGV received at time=1716371234 on cpu 3 ***",
        "[2025-07-06 07:14:27,052 C 2915798 2915798] task_receiver.cc:219:  Check failed: objects_valid",
    ],
    incidents.TRACEBACK: [
        "Traceback (most recent call last):",
        '  File "/opt/verl/verl/trainer/main_ppo.py", line 64, in main',
        "ValueError: the batch is empty",
        "Exception: rollout worker gave up",
        "KeyboardInterrupt",
    ],
}

# A line of each phase (tui/parsers/stall_evidence.py) as the software that prints it does, one
# per needle at least (tests/parsers/test_stall_evidence.py names where each was printed).
PHASE_MARKER_LINES = {
    stall_evidence.VALIDATION: [
        "test_gen_batch meta info: {'eos_token_id': 151645, 'pad_token_id': 151643, 'recompute_log_prob': False, "
        "'do_sample': False, 'validate': True, 'global_steps': 9}",
        "***** Running Evaluation *****",
    ],
    stall_evidence.CHECKPOINT: [
        "local_global_step_folder: checkpoints/gsm8k/qwen/global_step_80",
        "Saving model checkpoint to out/checkpoint-500",
    ],
    stall_evidence.REQUEST_RETRY: ["INFO:openai._base_client:Retrying request in 0.421778 seconds (retry 1 of 1000)"],
    stall_evidence.ROLLOUT: [
        "(APIServer pid=3646) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 1055.3 tokens/s, Running: 18 reqs, Waiting: 43 reqs, GPU KV cache usage: 95.9%",
        "[04:40:55 TP0] Decode batch. #running-req: 2, #token: 4078, token usage: 0.00, gen throughput (token/s): 447.31",
        "[16:43:29 TP0] Prefill batch. #new-seq: 1, #new-token: 2062, #cached-token: 0, cache hit rate: 0.00%",
        "(VllmGenerationWorker pid=8859, ip=10.4.2.9) INFO 01-21 04:17:09 [executor_base.py:203] It took 0.069845 "
        "seconds to wake up tags ['kv_cache'].",
    ],
    stall_evidence.WEIGHT_SYNC: [
        "(VllmGenerationWorker pid=8299, ip=10.4.28.6) INFO 01-21 04:17:06 [executor_base.py:203] It took 0.614081 "
        "seconds to wake up tags ['weights'].",
        "[2025-10-13 10:00:00 TP0] Update engine weights online from disk begin. avail mem=61.52 GB",
    ],
    stall_evidence.WEIGHT_SYNC_ENDED: ["[2025-10-13 10:00:09 TP0] Update weights end."],
    stall_evidence.ROLLOUT_ENDED: [
        "(VllmGenerationWorker pid=8861, ip=10.4.2.9) INFO 01-21 04:18:03 [executor_base.py:187] It took 1.018574 "
        "seconds to fall asleep.",
    ],
    stall_evidence.COLLECTIVE: [
        "vm:829:872 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f9f3de81200 recvbuff 0x7f9f3de81200 count 132097 "
        "datatype 7 op 0 root 0 comm 0x10cf1400 [nranks=2] stream 0x17c0a740",
        "ai:480850:480850 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
        "[rank0]:[I1128 19:41:42.611600641 ProcessGroupWrapper.cpp:710] [Rank 0] Running collective: "
        "CollectiveFingerPrint(SequenceNumber=0, OpType=ALLGATHER, TensorShape=[1], TensorDtypes=Long",
    ],
    stall_evidence.COLLECTIVE_ENDED: [
        "machine-1:16194:18586 [6] NCCL INFO comm 0x7f4b28006640 rank 14 nranks 16 cudaDev 6 busId b1000 - Init COMPLETE",
    ],
    # slime's timers (slime/observability/timer.py): a start names its timer's phase, an end ends it
    stall_evidence.TRAINING: ["(MegatronTrainRayActor pid=1234) [2025-11-20 10:00:00] timer.py:24 - Timer actor_train start"],
    stall_evidence.TIMER_ENDED: ["[2025-11-20 10:00:09] timer.py:24 - Timer update_weights end (elapsed: 9.1s)"],
}


def test_output_split_across_chunks_and_carriage_returns_inside_lines():
    output = GrepOutput()
    assert output.feed(b"12:step:1 - a:1\n40:(pid=1) \rTraining Progress: 1%|") == [(12, b"step:1 - a:1\n")]
    assert output.feed(b"| 1/9\n") == [(40, b"(pid=1) \rTraining Progress: 1%|| 1/9\n")]


def test_command_quotes_nothing_and_ends_options_before_the_path():
    argv = grep_command([b"step:", b"'loss':"], "-weird name.log")
    assert argv == ["grep", "-a", "-b", "-E", "-e", "step:|'loss':", "--", "-weird name.log"]


def test_every_needle_is_one_literal_alternative_of_the_expression(tmp_path):
    """Characters an extended expression gives a meaning to stand for themselves."""
    needles = [b"%|", b"[prompt]", b"Traceback (most recent call last)", b"a.b*c+d?e{2}^f$g\\h"]
    lines = [b"x %| y", b"[prompt] q", b"Traceback (most recent call last):", b"a.b*c+d?e{2}^f$g\\h",
             b"abbbcd", b"prompt", b"Traceback most recent call last"]
    log = tmp_path / "log"
    log.write_bytes(b"\n".join(lines) + b"\n")
    found = subprocess.run(grep_command(needles, str(log)), capture_output=True,
                           env={"LC_ALL": "C"}).stdout.splitlines()
    assert [line.split(b":", 1)[1] for line in found] == lines[:4]


def test_each_needle_is_looked_for_by_its_measured_part_and_shared_parts_once():
    """The parts come from bench/needle_forms.py; parts several needles share go to grep once."""
    assert set(FORMS) == set(NEEDLES)  # a new needle: run the tool (without a part it is looked for whole)
    assert grep_needles([b"RayTaskError", b"ActorDiedError", b"step:"]) == (b"Error", b"step:")
    assert grep_needles([b"a needle nobody measured"]) == (b"a needle nobody measured",)


def test_a_ray_actor_prefix_is_looked_for_whole():
    """Its parts are parts of other actors' prefixes ("(TaskRunner pid=" starts most verl lines)."""
    assert grep_needles([b"(Runner pid="]) == (b"(Runner pid=",)


def test_every_grep_string_is_a_part_of_its_needle_long_enough_not_to_match_by_chance():
    for needle in NEEDLES:
        (part,) = grep_needles([needle])
        assert part in needle
        assert len(part) >= min(len(needle), 5)
        assert part.decode()  # whole characters: the expression is text


def assert_found_in_chatter(tmp_path, marker_lines: dict[str, list[str]], needles: tuple[str, ...],
                            record_type: type[IncidentRecord] | type[PhaseRecord]) -> None:
    """Every marker line (one per needle at least), at the start, in the middle and at the end
    of seed 001's chatter, reaches the scanner through the parts grep looks for and reads as
    its kind."""
    markers = [line.encode() for lines in marker_lines.values() for line in lines]
    assert all(any(needle.encode() in line for line in markers) for needle in needles)
    chatter = tmp_path / "chatter.log"
    subprocess.run([sys.executable, str(CHATTER), str(verl_log("032")), str(chatter), "2"],
                   check=True, stdout=subprocess.DEVNULL)
    text = chatter.read_bytes()
    middle = text.index(b"\n", len(text) // 2) + 1
    log = tmp_path / "marked.log"
    block = b"".join(line + b"\n" for line in markers)
    log.write_bytes(block + text[:middle] + block + text[middle:] + block)
    found = subprocess.run(grep_command(NEEDLES, str(log)), capture_output=True, env={"LC_ALL": "C"}).stdout
    picked = [line.rstrip(b"\n") for _, line in GrepOutput().feed(found)]
    for kind, lines in marker_lines.items():
        for line in lines:
            assert picked.count(line.encode()) == 3, (kind, line)
            records = LogScanner().scan_line(line.encode() + b"\n", 0)
            assert [record.kind for record in records if isinstance(record, record_type)] == [kind], line


def test_each_crash_class_is_found_by_grep_anywhere_in_a_chatty_log(tmp_path):
    assert_found_in_chatter(tmp_path, MARKER_LINES, incidents.incident_needles(), IncidentRecord)


def test_each_phase_line_is_found_by_grep_anywhere_in_a_chatty_log(tmp_path):
    assert_found_in_chatter(tmp_path, PHASE_MARKER_LINES, stall_evidence.phase_needles(), PhaseRecord)


def test_on_every_corpus_log_grep_picks_each_needed_line_and_little_else():
    for log in all_verl_logs():
        wanted = [line for line in log.read_bytes().rstrip(b"\n").split(b"\n")
                  if any(needle in line for needle in NEEDLES)]
        found = subprocess.run(grep_command(NEEDLES, str(log)), capture_output=True,
                               env={"LC_ALL": "C"}).stdout
        picked = [line.rstrip(b"\n") for _, line in GrepOutput().feed(found)]
        assert [line for line in picked if line in wanted] == wanted, log.name
        assert sum(map(len, picked)) <= 1.05 * sum(map(len, wanted)) + 4096, log.name


def test_a_line_grep_picked_for_a_part_of_a_needle_gives_nothing():
    scanner = LogScanner()
    assert scanner.scan_line(b"ERROR: the f memory pool was killed unexpectedly\n", 0) == []
    assert scanner.scan_line(b"ERROR: CUDA out of memory\n", 0)
