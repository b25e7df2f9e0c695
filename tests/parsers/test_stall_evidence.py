"""The rollout engines' and the collectives' phase lines, on lines as their programs print them
(each from a public log or from the format string in the program's source, named beside it), and
the lines next to them that must name no phase: a model's answer that talks about them, and the
progress a healthy engine prints."""

from __future__ import annotations

import pytest

from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import PhaseRecord
from tui.parsers.stall_evidence import (
    COLLECTIVE,
    COLLECTIVE_ENDED,
    ROLLOUT,
    ROLLOUT_ENDED,
    WEIGHT_SYNC,
    WEIGHT_SYNC_ENDED,
    match_phase,
)

# (kind, line, where it was printed)
PHASE_LINES = [
    # vLLM V0's stats (vllm/engine/metrics.py), verl issue #12 (a rollout that hung, 2024-11-12)
    (ROLLOUT, "INFO 11-12 22:04:23 metrics.py:406] Avg prompt throughput: 0.0 tokens/s, Avg generation "
              "throughput: 103.0 tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache "
              "usage: 11.0%, CPU KV cache usage: 0.0%."),
    # vLLM V1's (vllm/v1/metrics/loggers.py), vllm issue #43295; waiting requests alone are work too
    (ROLLOUT, "(APIServer pid=3646) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: "
              "0.0 tokens/s, Avg generation throughput: 1055.3 tokens/s, Running: 18 reqs, Waiting: 43 reqs, "
              "GPU KV cache usage: 95.9%, Prefix cache hit rate: 0.0%"),
    (ROLLOUT, "(APIServer pid=1) INFO 05-12 08:01:49 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 "
              "tokens/s, Avg generation throughput: 7.2 tokens/s, Running: 0 reqs, Waiting: 1 reqs, GPU KV "
              "cache usage: 68.8%, Prefix cache hit rate: 0.0%"),
    # SGLang before 0.4.7 (sglang issue #1270) and since (OpenClaw-RL issue #44, under Ray), its prefill
    # (sglang issue #1612) and its log header with DP/TP/EP ranks (sglang PR #11854)
    (ROLLOUT, "[04:40:55 TP0] Decode batch. #running-req: 2, #token: 4078, token usage: 0.00, gen throughput "
              "(token/s): 447.31, #queue-req: 0"),
    (ROLLOUT, "(SGLangEngine pid=41820) [2026-03-22 13:53:37 TP0] Decode batch, #running-req: 6, #token: 42414, "
              "token usage: 0.04, cuda graph: True, gen throughput (token/s): 1374.02, #queue-req: 0,"),
    (ROLLOUT, "[16:43:29 TP0] Prefill batch. #new-seq: 1, #new-token: 2062, #cached-token: 0, cache hit rate: "
              "0.00%, token usage: 0.00, #running-req: 0, #queue-req: 0"),
    (ROLLOUT, "2025-10-20 03:02:22 INFO 31223 [DP3 TP3 EP3 scheduler_metrics_mixin.py:222] Decode batch. "
              "#running-req: 32, #token: 157952, token usage: 0.21, accept len: 1.93, cuda graph: True"),
    # vLLM's sleep mode (vllm/executor/executor_base.py), NeMo-RL's log in pmotgi/nemo-rl-on-gke
    # (tests/fixtures/logs/kin/nemorl_gke_llama8b_readme_step4_of_100.log), Ray's dedup suffix too
    (WEIGHT_SYNC, "(VllmGenerationWorker pid=8299, ip=10.4.28.6) INFO 01-21 04:17:06 [executor_base.py:203] "
                  "It took 0.614081 seconds to wake up tags ['weights']."),
    (ROLLOUT, "(VllmGenerationWorker pid=8859, ip=10.4.2.9) INFO 01-21 04:17:09 [executor_base.py:203] It took "
              "0.069845 seconds to wake up tags ['kv_cache']. [repeated 15x across cluster]"),
    (ROLLOUT_ENDED, "(VllmGenerationWorker pid=8861, ip=10.4.2.9) INFO 01-21 04:18:03 [executor_base.py:187] "
                    "It took 1.018574 seconds to fall asleep."),
    # SGLang reloading weights from disk (AReaL's way): sgl-project/sglang
    # python/sglang/srt/model_executor/model_runner.py, ``update_weights_from_disk``, under its log header
    (WEIGHT_SYNC, "[2025-10-13 10:00:00 TP0] Update engine weights online from disk begin. avail mem=61.52 GB"),
    (WEIGHT_SYNC_ENDED, "[2025-10-13 10:00:09 TP0] Update weights end."),
    (WEIGHT_SYNC_ENDED, "(SGLangEngine pid=17467) [2025-10-13 10:00:09 TP3] Update weights end. "
                        "[repeated 7x across cluster]"),
    # an engine with nothing left: vLLM says it once at INFO, then goes quiet (vllm/v1/metrics/loggers.py)
    (ROLLOUT_ENDED, "(vLLMHttpServer pid=7) INFO 11-28 10:00:00 [loggers.py:123] Engine 000: Avg prompt "
                    "throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, "
                    "Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%"),
    # NCCL's own lines: tests/fixtures/logs/generated/ddp/nccl_debug_coll_rank1_hang_*.log (2×H200),
    # NVIDIA/nccl issue #857 (a warning with its source), horovod issue #3658 (behind mpirun's tag)
    (COLLECTIVE, "vm:829:872 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f9f3de81200 recvbuff 0x7f9f3de81200 "
                 "count 132097 datatype 7 op 0 root 0 comm 0x10cf1400 [nranks=2] stream 0x17c0a740"),
    (COLLECTIVE, "ai:480850:480850 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]"),
    (COLLECTIVE, "[1,5]<stdout>:ip-172-31-12-129:1760:1771 [1] NCCL INFO Channel 01 : 5[1c0] -> 3[1e0] [send] "
                 "via NET/Socket/0"),
    # since NCCL 2.26 a warning carries the time in front (NCCL_DEBUG_TIMESTAMP_LEVELS=WARN by default;
    # the format as NVIDIA/nccl's own test of it, src/debug.cc's NCCL_DEBUG_TIMESTAMP_FORMAT)
    (COLLECTIVE, "[2026-11-28 19:45:33] vm:829:846 [0] init.cc:1234 NCCL WARN improper usage of ncclCommInitRank: "
                 "nranks=0"),
    (COLLECTIVE_ENDED, "machine-1:16194:18586 [6] NCCL INFO comm 0x7f4b28006640 rank 14 nranks 16 cudaDev 6 "
                       "busId b1000 - Init COMPLETE"),
    # Ray's dedup suffix after it (its format as in the NeMo-RL lines above)
    (COLLECTIVE_ENDED, "(WorkerDict pid=828, ip=172.26.149.59) machine-1:828:901 [0] NCCL INFO comm 0x7f4b28006640 "
                       "rank 0 nranks 16 cudaDev 0 busId 1a000 - Init COMPLETE [repeated 7x across cluster]"),
    (COLLECTIVE_ENDED, "vm:829:846 [0] NCCL INFO comm 0x10cf1400 rank 0 nranks 2 cudaDev 0 busId 60 - Abort COMPLETE"),
    # torch's ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL, TORCH_CPP_LOG_LEVEL=INFO), gloo on
    # this VM with torch 2.13.0+cpu (tests/fixtures/logs/generated/ddp/MANIFEST.md)
    (COLLECTIVE, "[rank0]:[I1128 19:41:42.611600641 ProcessGroupWrapper.cpp:710] [Rank 0] Running collective: "
                 "CollectiveFingerPrint(SequenceNumber=0, OpType=ALLGATHER, TensorShape=[1], TensorDtypes=Long"),
]

# Lines with a needle that name no phase: what a model or a reward function prints about these
# programs, and lines of theirs that say nothing of where the run is.
NO_PHASE = [
    "The answer: vLLM prints Avg prompt throughput: 12 tokens/s when it runs, and Decode batch lines too.",
    "Step 3: set NCCL_DEBUG so that NCCL INFO lines appear, then look for NCCL WARN in them.",
    "It took 3 seconds to wake up and 20 minutes to fall asleep, the story says.",
    "reward: Running collective: none; Prefill batch of prompts done",
    "Update weights end. Update engine weights online from the notes, the model suggests.",
    # a full wake-up (no tags) can be either the weights' sync or the generation after it
    "(EngineCore_DP0 pid=685) INFO 05-13 12:02:31 [abstract.py:330] It took 0.005755 seconds to wake up "
    "tags {'weights', 'kv_cache'}.",
    "(LLMRayActor pid=132389) INFO 03-21 09:06:54 executor_base.py:219] It took 1.144703 seconds to wake up.",
]


@pytest.mark.parametrize(("kind", "line"), PHASE_LINES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(PHASE_LINES)])
def test_each_phase_line_names_its_phase(kind: str, line: str):
    record = match_phase(line, 41)
    assert record is not None and record.kind == kind and record.offset == 41


@pytest.mark.parametrize("line", NO_PHASE)
def test_talk_about_them_is_no_phase(line: str):
    assert match_phase(line, 0) is None


def test_the_line_quoted_is_the_message_without_the_process_and_log_headers():
    record = match_phase(PHASE_LINES[7][1], 0)
    assert record is not None
    assert record.text == "It took 0.614081 seconds to wake up tags ['weights']."
    assert record.source == "(VllmGenerationWorker pid=8299, ip=10.4.28.6)"


def test_each_vllm_engine_is_its_own_source():
    line = ("(vLLMHttpServer pid=7) INFO 11-28 10:00:00 [loggers.py:123] Engine 003: Avg prompt throughput: "
            "0.0 tokens/s, Avg generation throughput: 9.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs")
    record = match_phase(line, 0)
    assert record is not None and record.source == "(vLLMHttpServer pid=7) Engine 003"


def test_a_generation_bar_short_of_its_total_is_the_rollout_and_a_full_one_ends_it():
    """vLLM's ``Processed prompts`` bars from NeMo-RL's log (pmotgi/nemo-rl-on-gke): the scanner
    takes them as bars, and they say where generation stands too."""
    lines = (b"Processed prompts:  80%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88"
             b"\xe2\x96\x88\xe2\x96\x89  | 102/128 [00:43<00:10,  2.58it/s, est. speed input: 387.13 toks/s, "
             b"output: 3306.25 toks/s] [repeated 3x across cluster]\n"
             b"Processed prompts: 100%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88"
             b"\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88| 128/128 [00:39<00:00,  3.21it/s, est. speed "
             b"input: 419.58 toks/s, output: 5380.81 toks/s]\n"
             b"Adding requests: 100%|\xe2\x96\x88\xe2\x96\x88| 128/128 [00:00<00:00, 15086.58it/s]\n")
    scanner = LogScanner()
    phases = [r for r in scanner.feed(lines) + scanner.finish() if isinstance(r, PhaseRecord)]
    assert [p.kind for p in phases] == [ROLLOUT, ROLLOUT_ENDED]
    assert phases[0].text.startswith("Processed prompts:  80%|") and phases[1].offset > 0


def test_an_sglang_line_speaks_for_its_rank():
    """The rank in SGLang's header is part of who printed the line, as vLLM's engine index is."""
    begun = match_phase("(SGLangEngine pid=17467) [2025-10-13 10:00:00 TP3] Update engine weights online "
                        "from disk begin. avail mem=61.52 GB", 0)
    metrics = match_phase("2025-10-20 03:02:22 INFO 31223 [DP3 TP3 EP3 scheduler_metrics_mixin.py:222] "
                          "Decode batch, #running-req: 6, #token: 4078", 0)
    assert begun is not None and begun.source == "(SGLangEngine pid=17467) TP3"
    assert metrics is not None and metrics.source == "DP3 TP3 EP3"
