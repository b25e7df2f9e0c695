"""Cleaning lines: colour codes, Ray prefixes, carriage-return redraws."""

import pytest

from tui.parsers.text import (
    PROCESS_PREFIX,
    clean_segments,
    decode,
    strip_ansi,
    strip_log_header,
    strip_ray_prefix,
    strip_stamp,
)


def test_ray_colour_prefix_is_removed():
    raw = "\x1b[2m\x1b[36m(main_task pid=54569)\x1b[0m step:1 - a:1"
    assert clean_segments(raw) == ["step:1 - a:1"]


def test_every_ray_prefix_shape_is_removed():
    for prefix in ("(TaskRunner pid=1) ", "(pid=1) ", "(TaskRunnerV1 pid=1, ip=10.0.0.2) ",
                   "(main_task pid=12345) ", "(raylet) "):
        assert strip_ray_prefix(prefix + "x") == "x"


def test_text_in_parentheses_that_is_not_a_prefix_stays():
    assert strip_ray_prefix("(not a prefix) x") == "(not a prefix) x"


def test_carriage_return_redraws_become_segments():
    line = "(TaskRunner pid=1) \rTraining Progress:  0%|  | 0/9\rTraining Progress: 11%|  | 1/9\n"
    assert clean_segments(line) == ["Training Progress:  0%|  | 0/9", "Training Progress: 11%|  | 1/9"]


def test_invalid_utf8_decodes_with_replacement():
    assert decode(b"step:1 - a:\xff\xfe1") == "step:1 - a:\ufffd\ufffd1"


def test_strip_ansi_leaves_plain_text_alone():
    assert strip_ansi("plain [bold] text") == "plain [bold] text"


@pytest.mark.parametrize("stamp", [
    "2025-08-08T12:00:03.123456789Z ",  # kubectl logs --timestamps, docker logs -t
    "2025-06-10T08:21:33.1234567Z ",  # GitHub Actions' raw job log
    "train (8xH100)\tRun e2e GRPO\t2025-06-10T08:21:33.1234567Z ",  # gh run view --log
    "2025-08-08T20:00:03+08:00 ",
    "ERROR 2025-03-30T23:51:21.303592681Z ",  # Google Cloud Logging, severity first
])
def test_a_log_collectors_timestamp_goes_with_the_process_prefix(stamp):
    line = f"{stamp}\x1b[36m(TaskRunner pid=7)\x1b[0m step:3 - critic/score/mean:0.5"
    assert clean_segments(line) == ["step:3 - critic/score/mean:0.5"]
    assert strip_stamp(f"{stamp}Traceback (most recent call last):") == "Traceback (most recent call last):"


@pytest.mark.parametrize("label", ["0: ", " 3: ", "15: ", "> ", "> > "])
def test_srun_labels_and_markdown_quotes_go_with_the_process_prefix(label):
    line = f"{label}[rank3]:   File \"/verl/trainer/main_ppo.py\", line 64, in main"
    assert clean_segments(line) == ['  File "/verl/trainer/main_ppo.py", line 64, in main']


@pytest.mark.parametrize("line", [
    "2026-03-26 14:44:59.431 | INFO     | skyrl.train.trainer:train:261 - Started: 'step'",
    "2025-10-06 08:41:18,620 WARNING exceptions.py:242 -- boom",
    "[2025-12-17 14:10:28] model.py:649 - step 11: {'train/loss': 0.1}",
    "2025-08-08T12:00:03 no zone, so not a collector's stamp",
])
def test_a_programs_own_log_time_stays(line):
    assert strip_stamp(line) == line


def test_an_actor_named_by_its_repr_is_a_ray_prefix_too():
    # NeMo-RL's workers define __repr__, and Ray names their lines by it (kin sample
    # nemorl_gke_gemma27b_rl_loop_steps4_10_max_steps.log, line 975).
    line = ("(DTensorPolicyWorker[rank=0] pid=9008, ip=10.4.2.13) Saving tokenizer (or processor) "
            "to /data/nemo_rl_gemma3_25b_2_27/tmp_step_10/policy/tokenizer")
    assert strip_ray_prefix(line).startswith("Saving tokenizer")
    assert strip_ray_prefix("(Worker(index=2) pid=482120) Traceback (most recent call last):") == \
        "Traceback (most recent call last):"


@pytest.mark.parametrize(("line", "own"), [
    # torchrun inside a Ray actor (wild sample openrlhf624, two nodes): Ray's name with the
    # node's ip, then the rank, then glog's header, which is the line's own.
    ("(ActorModelRayActor pid=6150, ip=10.0.0.2) [rank0]:[E1225 12:58:32.712922209 "
     "ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog", "[E1225 12:58:32.712922209 ProcessGroupNCCL.cpp:616]"),
    ("(Worker pid=1) (Worker_TP1 pid=1) [default3]: RuntimeError: x", "RuntimeError: x"),
    ("(TaskRunner pid=1) [rank=0] x", "[rank=0] x"),  # not torchrun's
])
def test_torchruns_rank_after_rays_name_goes_with_it(line, own):
    assert strip_ray_prefix(line).startswith(own)


def test_vllms_log_header_goes_and_the_message_keeps_its_indentation():
    assert strip_log_header('ERROR 01-08 17:16:15 [serving_chat.py:1278]   File "a.py", line 70, in get') == \
        '  File "a.py", line 70, in get'
    assert strip_log_header("ERROR 06-09 06:57:48 worker_base.py:581] RuntimeError: boom") == "RuntimeError: boom"
    assert strip_log_header("ERROR: the reward server is down") == "ERROR: the reward server is down"


@pytest.mark.parametrize("label", [
    "node01: ", "gpu-a100-3.cluster.local: ", "worker-1: ",  # pdsh, clush; DeepSpeed's pdsh launcher
    "[1,0]<stdout>:", "[1,12]<stderr>: ",  # mpirun --tag-output (Open MPI 4; --output tag, 5.x)
    "[1,0]<stdout>:worker-1: ",
    "[dlc163vnre3d5pv3-master-0] ", "[trainer-worker-0] ",  # PAI-DLC's job log, kubetail's pod
    "node01: [trainer-worker-0] ",
])
def test_a_relays_host_or_rank_label_goes_with_the_process_prefix(label):
    line = f"{label}(TaskRunner pid=7) step:3 - critic/score/mean:0.5"
    assert clean_segments(line) == ["step:3 - critic/score/mean:0.5"]
    assert strip_stamp(f"{label}Traceback (most recent call last):") == "Traceback (most recent call last):"


@pytest.mark.parametrize("line", [
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "EI0006: [PID: 2837] 2025-02-24-19:53:37.385.447 Getting socket times out.",  # CANN's code
    "wandb: Run summary:",
    "reward: 0.5",
    "Node01: upper case is not a cluster's host name",
    "[rank0]: Traceback (most recent call last):",  # torchrun's rank: the process, kept for it
    "[step1] a bracketed word of the program's own: a pod's name has a hyphen",
    "[INFO] [launch.py:319:sigkill_handler] Killing subprocess 1",
])
def test_a_line_that_only_looks_like_a_host_label_stays(line):
    assert strip_stamp(line) == line


@pytest.mark.parametrize("lead", ["node01: > ", "> node01: ", "> 2025-08-08T12:00:03.123456789Z "])
def test_a_quote_and_a_relay_label_go_in_either_order(lead):
    assert strip_stamp(f"{lead}[E ProcessGroupNCCL.cpp:481] [Rank 65] Watchdog caught") == \
        "[E ProcessGroupNCCL.cpp:481] [Rank 65] Watchdog caught"


def test_vllms_own_process_prefix_behind_rays_goes_with_it():
    # vllm-project/vllm-ascend#7676 (tests/fixtures/logs/crashes): vLLM >= 0.10 names its
    # processes like Ray does, so a worker inside a Ray actor prints two prefixes.
    line = ("(Worker pid=16884) (Worker_DP0_TP1_EP1 pid=16884) ERROR 03-25 06:14:02 "
            "[multiproc_executor.py:880] WorkerProc hit an exception.")
    assert strip_ray_prefix(line).startswith("ERROR 03-25 06:14:02 [multiproc_executor.py:880] WorkerProc")
    assert PROCESS_PREFIX.match(line).group(0).strip() == "(Worker pid=16884) (Worker_DP0_TP1_EP1 pid=16884)"
    # A third parenthesis is the message's own.
    assert strip_ray_prefix("(EngineCore_DP0 pid=2) (pid=3) (not a prefix) x") == "(not a prefix) x"
