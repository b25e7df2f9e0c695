"""A trainer's start is recognised in real logs cut before their first step (a run hung
while starting prints nothing more), and text that is no training run is not taken for one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import verl_log
from tui.parsers.run_start import START_HEAD_BYTES, training_start

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


def head_before(path: Path, first_step: bytes) -> bytes:
    """The log up to the line that holds its first step or training bar: what a run that
    hung just before it had written."""
    data = path.read_bytes()
    return data[:data.rindex(b"\n", 0, data.index(first_step)) + 1][:START_HEAD_BYTES]


@pytest.mark.parametrize(("path", "first_step", "seen"), [
    # Ray's actors wait for GPUs that never come (colour codes around the prefix).
    (LOGS / "generated/ray/ray_17_unschedulable_gpu_stall.log", b"(autoscaler", "a Ray actor's output"),
    # verl's driver: the resolved config's pprint (behind Ray's prefix), then nothing.
    (verl_log("027"), b"step:0 ", "verl's config"),
    # verl's SFT trainer under torchrun.
    (verl_log("029"), b"step:", "torchrun's start"),
    # torchrun's banner before two TRL ranks load their model.
    (LOGS / "generated/trl/grpo_ddp_finished.log", b"Loading weights", "torchrun's start"),
    # transformers 5 loading a model before TRL's first bar.
    (LOGS / "generated/trl/grpo_finished.log", b"  0%|          | 0/30", "a model loading"),
    # Ray's driver starting the cluster (no actor has printed yet).
    (LOGS / "generated/ray/ray_10_clean_finish_hydra.log", b"(TaskRunner", "Ray starting"),
])
def test_a_start_is_seen_before_the_first_step(path: Path, first_step: bytes, seen: str):
    assert training_start(head_before(path, first_step)) == seen


@pytest.mark.parametrize("text", [
    b"",
    b"nothing\n",
    b"Requirement already satisfied: torch>=2.1 in ./.venv/lib/python3.11/site-packages\n",
    b'{"prompt": "How many r are in strawberry?", "answer": "3"}\n' * 50,
    b"# My run notes\nlr=1e-6, kl=0.001; the pid=42 of the old job was killed\n",
    (Path(__file__).resolve().parents[2] / "README.md").read_bytes()[:4096],
])
def test_text_that_is_no_run_shows_no_start(text: bytes):
    assert training_start(text) is None
