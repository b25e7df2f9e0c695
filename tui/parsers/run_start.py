"""What says a log is a training run's, before its first step.

Most hangs come before the first step: a collective that never initialises, a
model that never finishes loading, actors waiting for GPUs that never free up.
Such a log holds no step line, progress bar or failure, yet it is plainly a
trainer's output, and "not a training log" would be the wrong answer about a
run that is stuck (``rlwatch check`` exits 3 for text that is no run at all).

The grammar is what the launchers and libraries every trainer runs through
print as they start, not any one trainer's words: Ray's actor prefix
(``(TaskRunner pid=123)``, ``(WorkerDict pid=…, ip=…)``), Ray's own start-up
lines, torchrun's and accelerate's banners, the HF Trainer's ``***** Running
training *****``, a verl config dump, DeepSpeed's and vLLM's start-up lines,
NCCL's ``NCCL INFO`` lines, checkpoint shards loading, wandb's run banner.
Pure: bytes in, a short name of what was recognised out (a trainer's own words
named first, then the launchers').
"""

from __future__ import annotations

import re

# How much of a log's start is looked at: a trainer's launch lines come first.
START_HEAD_BYTES = 256 * 1024

_STARTS: tuple[tuple[str, re.Pattern[bytes]], ...] = tuple(
    (name, re.compile(pattern, re.MULTILINE)) for name, pattern in (
        ("verl's config", rb"'actor_rollout_ref': \{|^actor_rollout_ref:\s*$|Total training steps: \d"),
        ("the HF Trainer's start", rb"\*{5} Running training \*{5}"),
        ("a Ray actor's output", rb"\((?:[A-Za-z_][\w.:-]*(?:\[[^\]\n]*\])? )?pid=\d+(?:, ip=[\d.:a-fA-F]+)?\)(?:\x1b\[[\d;]*m)* "),
        ("Ray starting", rb"Started a local Ray instance|Connecting to existing Ray cluster|ray\.init\("),
        ("torchrun's start", rb"torch[./]distributed[./]run|Setting OMP_NUM_THREADS environment variable"),
        ("accelerate's start", rb"The following values were not passed to `accelerate launch`"),
        ("DeepSpeed's start", rb"\[real_accelerator\.py:\d+:\w+\] Setting ds_accelerator|DeepSpeed info: version="),
        ("vLLM's engine starting", rb"Initializing an? (?:V1 )?LLM engine|vLLM API server version"),
        ("NCCL starting", rb"NCCL INFO (?:Bootstrap|NCCL version|cudaDriverVersion|Init COMPLETE)"),
        ("a model loading", rb"Loading (?:checkpoint shards|safetensors checkpoint shards|weights):"),
        ("wandb's run banner", rb"wandb: (?:Tracking run with wandb|Syncing run )"),
    ))


def training_start(head: bytes) -> str | None:
    """What in ``head`` (a log's first bytes) shows a trainer starting, or None."""
    for name, pattern in _STARTS:
        if pattern.search(head):
            return name
    return None
