"""Lines that say which phase of a step a run is in: the evidence of where a stall stopped.

A run that stops printing steps has usually said, in the lines since its last step, what it
began and never finished: verl prints ``test_gen_batch meta info: {…}`` when its validation
starts and ``local_global_step_folder: …/global_step_N`` as its checkpoint save begins; the HF Trainer
says ``Saving model checkpoint to …`` and ``***** Running Evaluation *****``; an OpenAI-style
client behind a reward function says ``Retrying request …`` for every call it repeats.
The rollout engine and the collectives say where they are too: vLLM's periodic
``Avg prompt throughput: … Running: 3 reqs`` and SGLang's ``Decode batch, #running-req: 3``
while they generate, vLLM's sleep mode ``It took 0.6 seconds to wake up tags ['weights']``
as verl starts pushing new weights into it (SGLang's ``Update engine weights online from disk
begin.`` as it reloads them from files), NCCL's own ``NCCL INFO`` lines (with
``NCCL_DEBUG=INFO``; one per collective with ``NCCL_DEBUG_SUBSYS=COLL``) and torch's
``Running collective: CollectiveFingerPrint(…)`` (``TORCH_DISTRIBUTED_DEBUG=DETAIL``).
slime (and Miles, its fork) times each part of its step and says so on the trainer's rank 0:
``Timer actor_train start`` … ``Timer actor_train end (elapsed: 12.3s)``; a timer that started
and did not end names the part the run is in (training, the weights' push to SGLang, a save).
A stalled step whose last such line is a checkpoint save was stuck saving (DESIGN.md's "What
a hang looks like from outside"). Some lines say a phase ended rather than began (an engine
with no request left, an engine put to sleep, a communicator whose set-up completed): they
are kept as one of :data:`ENDED`, so that the phase before them is not named as the one under way.
Lines a healthy run prints every step (the engines' progress) only name a phase when
nothing came after them: the latest phase line since the last step wins.

Each line is found like an incident's (:mod:`tui.parsers.incidents`): a needle the scanner
(and the box's grep) looks for, then a pattern that confirms it. Pure: text in, records out.
"""

from __future__ import annotations

import re

from tui.parsers.records import PhaseRecord, ProgressRecord
from tui.parsers.text import PROCESS_PREFIX, strip_log_header, strip_stamp

VALIDATION = "validation"
CHECKPOINT = "checkpoint"
REQUEST_RETRY = "request-retry"
ROLLOUT = "rollout"
WEIGHT_SYNC = "weight-sync"
COLLECTIVE = "collective"
# slime's training (its forward passes for the log-probs, then the optimizer's steps).
TRAINING = "training"
# A part of a step slime times under a name that says no phase (``wake_up``, a user's own).
TIMED = "timed"
# Lines that say a phase ended (the phase under way is then unknown): a rollout engine with
# no request left or put to sleep; a communicator whose set-up (or tear-down) completed; an
# engine's weights updated; a slime timer that ended.
ROLLOUT_ENDED = "rollout-ended"
COLLECTIVE_ENDED = "collective-ended"
WEIGHT_SYNC_ENDED = "weight-sync-ended"
TIMER_ENDED = "timer-ended"
ENDED = frozenset((ROLLOUT_ENDED, COLLECTIVE_ENDED, WEIGHT_SYNC_ENDED, TIMER_ENDED))

# vLLM's stats line (V0's ``metrics.py``: ``Avg prompt throughput: 0.0 tokens/s, Avg generation
# throughput: 103.0 tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 0 reqs, …``; V1's
# ``loggers.py``: ``Engine 000: Avg prompt throughput: …, Running: 3 reqs, Waiting: 0 reqs, …``),
# up to its request counts.
_VLLM_STATS = (r"Avg prompt throughput: [\d.]+ tokens/s, Avg generation throughput: [\d.]+ tokens/s, "
               r"Running: ")
_VLLM_WAITING = r" reqs, (?:Swapped: \d+ reqs, )?(?:Pending|Waiting): "

# slime's ``Timer`` (``slime/utils/timer.py``, since 2026-08 ``slime/observability/timer.py``;
# Miles' ``miles/utils/timer.py``): ``Timer {name} start`` and ``Timer {name} end (elapsed:
# {seconds:.1f}s)``, printed (2025-10-30 to 2025-11-17), then logged behind slime's header
# ``[2025-11-20 10:00:00] timer.py:24 - `` (Miles': ``[… actor_cell0_rank0] timer.py:31 - ``).
# The message is the whole line after that header: a sentence that mentions a timer is none.
# Ray merges the same line from several trainers (an actor's and a critic's rank 0) into one
# with ``[repeated 2x across cluster]`` after it.
_SLIME_TIMER = re.compile(r"(?:^|\] |\.py:\d+ - )(?P<message>Timer (?P<name>\w+) "
                          r"(?:(?P<start>start)|end \(elapsed: [\d.]+s\)))"
                          r"(?: \[repeated \d+x across cluster\])?$")
# The phase each of slime's and Miles' timers is (their names in slime @ 624b824a, 2026-08-21,
# and its history since the timers were first printed, and Miles @ 31f1ca96, 2026-08-21).
# ``{prefix}log_probs`` (``log_probs``, ``ref_log_probs``, ``teacher_log_probs``) is training too.
TIMER_PHASES = {
    # the trainer waiting, from the end of its training, for the next rollout's data
    "train_wait": ROLLOUT,
    "rollout": ROLLOUT,  # Miles' rollout manager
    "eval_rollout": VALIDATION,  # Miles' rollout manager
    "train": TRAINING,
    "actor_train": TRAINING,
    "critic_train": TRAINING,
    "data_preprocess": TRAINING,  # the rollout's data fetched and split for the trainer
    "ref_model_update": TRAINING,
    "update_weights": WEIGHT_SYNC,  # the trainer's weights pushed to SGLang's engines
    "update_weights_implementation": WEIGHT_SYNC,  # Miles
    "finalize_and_resume_engines": WEIGHT_SYNC,  # Miles
    "delta_encode": WEIGHT_SYNC,  # slime's delta weight update (2026-05 to 2026-08)
    "delta_finalize": WEIGHT_SYNC,
    "save_model": CHECKPOINT,
    "export_hf": CHECKPOINT,  # Miles
}

# (kind, needles, confirming pattern). A needle is as rare in reward-function chatter as the
# phrase allows: the box's grep pays for each on every byte of a backfill.
PHASE_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    # verl's ``_validate``: ``test_gen_batch meta info: {'eos_token_id': …, 'validate': True, …}``
    # (found by its ``'validate': True``: grep looks for ``test_gen_batch`` at 1.1-1.5× the CPU);
    # the HF Trainer's evaluation banner. verl's ``validation generation end`` is not looked
    # for (grep CPU 1.04× and 1.10×, bench/phase_needles.py's workloads): the validation that
    # began is the phase either way.
    (VALIDATION, ("'validate': True", "***** Running Evaluation"),
     re.compile(r"^test_gen_batch meta info: |^\*{5} Running Evaluation \*{5}")),
    # verl's ``_save_checkpoint``: ``local_global_step_folder: checkpoints/…/global_step_80``;
    # the HF Trainer's ``Saving model checkpoint to out/checkpoint-500``.
    (CHECKPOINT, ("local_global_step_folder: ", "Saving model checkpoint to"),
     re.compile(r"^local_global_step_folder: \S|Saving model checkpoint to \S")),
    # openai-python's retry of a request a server (a reward or judge model) did not answer, logged
    # at INFO: ``Retrying request in 0.42 seconds (retry 1 of 1000)``, before 1.x ``Retrying
    # request to /chat/completions in 0.42 seconds``.
    (REQUEST_RETRY, ("Retrying request",), re.compile(r"Retrying request (?:to \S+ )?in [\d.]+ seconds")),
    # The rollout engine generating: vLLM's stats with a request running or waiting (printed
    # every 10 s while it works), SGLang's scheduler lines (``Decode batch. #running-req: 2,
    # #token: 4078, …`` before 0.4.7, ``Decode batch, #running-req: 6, …`` since, ``Prefill
    # batch, #new-seq: 1, …``: printed only while it works), and vLLM's sleep mode waking the
    # KV cache (``It took 0.27 seconds to wake up tags ['kv_cache'].``), verl's last call before
    # it generates. An engine with nothing left (``Running: 0 reqs, … Waiting: 0 reqs``: vLLM
    # says it once, then goes quiet) or put to sleep (``It took 0.74 seconds to fall asleep.``)
    # has ended its rollout.
    (ROLLOUT, ("Avg prompt throughput", "Decode batch", "Prefill batch", "seconds to wake up"),
     re.compile(_VLLM_STATS + r"(?:[1-9]\d*" + _VLLM_WAITING + r"\d|\d+" + _VLLM_WAITING + r"[1-9])"
                r"|(?:Decode batch|Prefill batch)(?: \[\d+\])?[.,] #(?:running-req|new-seq): \d+, "
                r"|It took [\d.]+ seconds to wake up tags [\[{]'kv_cache'[\]}]\.")),
    # verl wakes the engine's weights alone (``It took 0.60 seconds to wake up tags
    # ['weights'].``), then pushes the trainer's weights into them, then wakes the KV cache.
    # SGLang reloading its weights from files the trainer wrote (``update_weights_from_disk``,
    # AReaL's way): ``Update engine weights online from disk begin. avail mem=61.52 GB`` (also
    # ``from tensorcast``), then ``Update weights end.`` once loaded.
    (WEIGHT_SYNC, ("seconds to wake up", "Update engine weights online from"),
     re.compile(r"It took [\d.]+ seconds to wake up tags [\[{]'weights'[\]}]\."
                r"|Update engine weights online from \w+ begin\.")),
    (WEIGHT_SYNC_ENDED, ("Update weights end.",), re.compile(r"\bUpdate weights end\.(?:$| \[repeated \d+x across cluster\])")),
    (ROLLOUT_ENDED, ("Avg prompt throughput", "seconds to fall asleep"),
     re.compile(_VLLM_STATS + r"0" + _VLLM_WAITING + r"0 reqs|It took [\d.]+ seconds to fall asleep\.")),
    # NCCL's ``comm 0x… rank 0 nranks 2 cudaDev 0 busId 60 - Init COMPLETE`` (``Destroy``, ``Abort``).
    (COLLECTIVE_ENDED, ("NCCL INFO",), re.compile(r"\bNCCL INFO .* - (?:Init|Destroy|Abort) COMPLETE\b")),
    # NCCL's own lines (``NCCL_DEBUG=INFO``): ``HOST:PID:TID [DEV] NCCL INFO MESSAGE``, a warning
    # with its source (``HOST:PID:TID [DEV] misc/socket.cc:484 NCCL WARN MESSAGE``); with
    # ``NCCL_DEBUG_SUBSYS=COLL`` one per collective launched (``NCCL INFO AllReduce: opCount 0
    # sendbuff 0x… count 132097 datatype 7 op 0 root 0 comm 0x… [nranks=2] stream 0x…``). Since
    # 2.26 a level may carry a time in front (``NCCL_DEBUG_TIMESTAMP_LEVELS``, WARN by default;
    # ``NCCL_DEBUG_TIMESTAMP_FORMAT``, ``[%F %T] `` by default).
    # torch's ``[rank0]:[I1128 19:41:42.611600641 ProcessGroupWrapper.cpp:710] [Rank 0] Running
    # collective: CollectiveFingerPrint(SequenceNumber=0, OpType=ALLGATHER, …`` (with
    # ``TORCH_DISTRIBUTED_DEBUG=DETAIL`` and ``TORCH_CPP_LOG_LEVEL=INFO``, gloo's and NCCL's alike).
    (COLLECTIVE, ("NCCL INFO", "NCCL WARN", "Running collective: "),
     re.compile(r"^(?:\[[^\]\n]{1,64}\] )?\S+:\d+:\d+ \[\d+\] (?:\S+:\d+ )?NCCL (?:INFO|WARN) \S"
                r"|ProcessGroupWrapper\.cpp:\d+\] \[Rank \d+\] Running collective: CollectiveFingerPrint\(")),
    # slime's timers: the phase is the timer's (TIMER_PHASES; TIMED where its name says none),
    # an end is TIMER_ENDED (see timer_phase).
    (TIMED, ("Timer ",), _SLIME_TIMER),
)
# How each phase reads in a finding: "stalled …, <words>".
PHASE_WORDS = {
    VALIDATION: "in validation",
    CHECKPOINT: "saving a checkpoint",
    REQUEST_RETRY: "retrying a request to a server",
    ROLLOUT: "in rollout (generation)",
    WEIGHT_SYNC: "syncing weights to the rollout engine",
    COLLECTIVE: "waiting in a collective or its set-up (NCCL/gloo)",
    TRAINING: "in training",
    TIMED: "in a part of the step slime times (its Timer line names it)",
}
# vLLM's engine index (V1, one per data-parallel engine): part of who printed a stats line.
_ENGINE = re.compile(r"\bEngine (\d+): Avg prompt")
# SGLang's rank in its header (``[2025-10-13 10:00:00 TP3] ``, ``[DP1 TP3 EP3 scheduler….py:222]``):
# each tensor-parallel rank reloads its own shard and says so, so one rank's end ends only its own.
_SGLANG_RANK = re.compile(r"\[(?:[^\]\n]{0,40}? )??((?:DP\d+ )?TP\d+(?: EP\d+)?)[ \]]")
# The text kept per line (the finding quotes it; the full line is at its offset).
_MAX_TEXT = 200


# vLLM's ``LLM.generate`` bar (verl's and NeMo-RL's synchronous rollout): ``Processed prompts:
# 80%|███████▉  | 102/128 [00:43<00:10,  2.58it/s, est. speed input: 387.13 toks/s, output: …]``.
# A bar is found by the scanner's ``%|`` already: no needle of its own.
GENERATION_BAR = "Processed prompts"


def bar_phase(bar: ProgressRecord, segment: str) -> PhaseRecord | None:
    """The rollout a vLLM generation bar says is under way (short of its total) or over."""
    if not bar.desc.endswith(GENERATION_BAR):  # every bar of a run comes here: the cheap test first
        return None
    prefix = PROCESS_PREFIX.match(bar.desc)
    if (bar.desc[prefix.end():] if prefix else bar.desc).strip() != GENERATION_BAR:
        return None
    kind = ROLLOUT_ENDED if bar.total is not None and bar.n >= bar.total else ROLLOUT
    line = segment.strip()
    start = PROCESS_PREFIX.match(line)
    return PhaseRecord(kind, (line[start.end():] if start else line).strip()[:_MAX_TEXT], bar.offset,
                       prefix.group(0).strip() if prefix else "")


def phase_needles() -> tuple[str, ...]:
    """Every needle of every phase, for the scanner and the box's grep."""
    return tuple(needle for _, needles, _ in PHASE_PATTERNS for needle in needles)


def match_phase(segment: str, offset: int) -> PhaseRecord | None:
    """The phase ``segment`` (a cleaned line) says the run began, if it says one."""
    for kind, needles, confirm in PHASE_PATTERNS:
        if not any(needle in segment for needle in needles):
            continue
        stamped = strip_stamp(segment.strip())
        prefix = PROCESS_PREFIX.match(stamped)
        line = strip_log_header((stamped[prefix.end():] if prefix else stamped).strip())
        found = confirm.search(line)
        if found is not None and kind == TIMED:
            return timer_phase(found, prefix.group(0).strip() if prefix else "", offset)
        if found is not None:
            engine = _ENGINE.search(line)
            rank = _SGLANG_RANK.search(line, 0, found.start())
            source = " ".join(part for part in (prefix.group(0).strip() if prefix else "",
                                                f"Engine {engine.group(1)}" if engine else "",
                                                rank.group(1) if rank else "") if part)
            return PhaseRecord(kind, line[:_MAX_TEXT], offset, source)
    return None


def timer_phase(found: re.Match[str], source: str, offset: int) -> PhaseRecord:
    """The phase a slime timer's line (``_SLIME_TIMER``'s match) says began, or that it ended:
    the record carries the timer's name, so that its end ends it and no other timer."""
    name = found.group("name")
    if found.group("start") is None:
        kind = TIMER_ENDED
    else:
        kind = TIMER_PHASES.get(name, TRAINING if name.endswith("log_probs") else TIMED)
    return PhaseRecord(kind, found.group("message")[:_MAX_TEXT], offset, source, timer=name)
