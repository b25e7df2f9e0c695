"""Crash markers: each failure a run prints is recognised by kind; the same words in prose are not."""

import pytest

from tui.parsers.incidents import match_incident


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 13.91 GiB.", "oom"),
        ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB", "oom"),
        ("RuntimeError: NPU out of memory. Tried to allocate 1.76 GiB (NPU 3; 60.97 GiB total)", "oom"),
        ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1024.00 MiB.", "oom"),
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
         "to allocate 4.00GiB", "oom"),
        ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
         "oom"),
        ("node_manager.cc:3193: 1 Workers (tasks / actors) killed due to memory pressure (OOM), "
         "0 Workers crashed due to other reasons", "oom"),
        ("Out of memory: Killed process 12345 (python3) total-vm:123kB", "oom"),
        # Slurm's cgroup OOM killer, new and old spellings, and srun's report of it, and the
        # time limit (nextflow-io/nextflow#5932, ArjunaCluster/ArjunaUsers#52, ZettaAI/zetta_utils#671).
        ("slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step "
         "tasks have been OOM Killed.", "oom"),
        ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=191.batch cgroup. Some of your "
         "processes may have been killed by the cgroup out-of-memory handler.", "oom"),
        ("srun: error: sdumont6156: task 0: Out Of Memory", "oom"),
        # slurmstepd's own memory enforcement, new and old (no ``error:``) spellings
        # (crashes/coquistt2238_…, crashes/adeptrl13_…).
        ("slurmstepd: error: Job 7518 exceeded memory limit (626359956 > 512000000), being killed", "oom"),
        ("slurmstepd: Job 1171978 exceeded memory limit (18202456 > 16384000), being killed", "oom"),
        ("slurmstepd: error: *** JOB 494583 ON ... CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***",
         "killed"),
        ("slurmstepd: error: *** STEP 494583.0 ON ... CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***",
         "killed"),
        ("[rank7]:[E419 10:42:28.858931807 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog caught "
         "collective operation timeout: WorkNCCL(SeqNum=4486, OpType=ALLTOALL)", "collective-timeout"),
        ("[rank6]:[E429 13:55:49.384372190 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) "
         "Rank 6] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in "
         "monitoring enqueued collectives.", "collective-timeout"),
        ("[rank0]:[F1003 07:43:07.917419540 ProcessGroupNCCL.cpp:1224] [PG 0 Rank 0] Terminating the "
         "process after attempting to dump debug info, due to collective timeout.", "collective-timeout"),
        ("[rank2]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 2] Heartbeat monitor timed out! Process will "
         "be terminated after dumping debug info. workMetaList_.size()=1", "collective-timeout"),
        ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
         "actor-died"),
        ("error: The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR",
         "actor-died"),
        ("A worker died or was killed while executing a task by an unexpected system error.",
         "actor-died"),
        ("2025-03-01 12:00:00,001\tERROR worker.py:409 -- Unhandled error (suppress with "
         "'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::WorkerDict.generate() (pid=1, ip=10.0.0.1)",
         "ray-error"),
        ("ray.exceptions.RayTaskError(ValueError): ray::TaskRunner.run() (pid=1, ip=10.0.0.1)",
         "ray-error"),
        ("Error executing job with overrides: ['algorithm.adv_estimator=grpo']", "hydra-error"),
        ("run_grpo.sh: line 12: 123456 Killed                  python3 -m verl.trainer.main_ppo",
         "killed"),
        ("Killed", "killed"),
        # torchrun's error box of a worker the kernel or a scheduler killed, or that crashed
        # in C (generated/trl grpo_ddp_rank0_sigkill.log).
        ("  traceback : Signal 9 (SIGKILL) received by PID 10285", "killed"),
        ("  traceback : Signal 11 (SIGSEGV) received by PID 4242", "fatal-signal"),
        ("Segmentation fault (core dumped)", "fatal-signal"),
        ("Fatal Python error: Segmentation fault", "fatal-signal"),
        ("terminate called after throwing an instance of 'c10::DistBackendError'", "fatal-signal"),
        # Ray's and glog's CHECK: a fatal log line, then a stack trace and an abort (verl#2380,
        # ray-project/ray#47759).
        ("[2025-07-06 07:14:27,052 C 2915798 2915798] task_receiver.cc:219:  Check failed: objects_valid",
         "fatal-signal"),
        ("F0827 12:00:00.123456 4242 nccl_manager.cc:306] Check failed: status.ok()", "fatal-signal"),
        ("Traceback (most recent call last):", "traceback"),
        ('  File "/verl/verl/trainer/main_ppo.py", line 64, in main', "traceback"),
    ],
)
def test_each_kind_of_failure(line, kind):
    incident = match_incident(line, 42)
    assert incident is not None and incident.kind == kind
    assert incident.offset == 42 and incident.text == line.strip()


@pytest.mark.parametrize(
    "line",
    [
        "step:1 - actor/pg_loss:0.1",
        "Tip: lower the batch size to avoid running out of memory",
        "The model thinks the robber was Killed by the guard",
        "He said: Killed it! Great job.",
        "we use gradient checkpointing so we never run out of memory here",
        'Answer: the string ", line " appears in the prompt',
        # An actor let go on purpose: Ray says why it is gone, and nothing failed.
        "The actor is dead because all references to the actor were removed.",
        # srun kills the other tasks once one failed: that one says why, not this.
        "srun: error: node107: tasks 1-7: Killed",
        "Order status: CANCELLED AT the customer's request",
        # torchrun stopping the other workers once one has failed: that one says why.
        "  traceback : Signal 15 (SIGTERM) received by PID 10286",
        "Check failed: the answer has no boxed number",  # a reward function's own words
        # Slurm's warning, printed of jobs that succeeded too (galaxyproject/galaxy#2309,
        # pepkit/geofetch#13): no kill.
        "slurmstepd: error: Exceeded job memory limit at some point.",
        "slurmstepd: error: Exceeded step memory limit at some point. Step may have been partially "
        "swapped out to disk.",
        "the reward model exceeded memory limit (32 GiB > 24 GiB), being killed is what we expect",
    ],
)
def test_the_same_words_in_prose_are_not_failures(line):
    assert match_incident(line, 0) is None


def test_a_ray_or_rank_prefix_does_not_hide_a_failure():
    incident = match_incident("[rank3]: torch.OutOfMemoryError: CUDA out of memory.", 0)
    assert incident is not None and incident.kind == "oom"


def test_torchs_cuda_warning_while_freeing_after_a_device_assert_is_no_failure():
    # nccl_rank1_device_assert: after the rank's AcceleratorError, one per CUDA event it frees.
    line = ("[rank1]:[W1128 17:10:48.214999122 CUDAEvent.h:57] Warning: CUDA warning: device-side "
            "assert triggered (function ~CUDAEvent)")
    assert match_incident(line, 0) is None
    assert match_incident("[rank1]: torch.AcceleratorError: CUDA error: device-side assert triggered",
                          0).kind == "device-error"
