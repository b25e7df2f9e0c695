"""Crash markers, each recognised by kind."""

import pytest

from tui.parsers.incidents import match_incident


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 13.91 GiB.", "cuda-oom"),
        ("[rank7]:[E419 10:42:28.858931807 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog caught "
         "collective operation timeout: WorkNCCL(SeqNum=4486, OpType=ALLTOALL)", "nccl-timeout"),
        ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
         "actor-died"),
        ("A worker died or was killed while executing a task by an unexpected system error.",
         "actor-died"),
        ("Error executing job with overrides: ['algorithm.adv_estimator=grpo']", "hydra-error"),
        ("Traceback (most recent call last):", "traceback"),
    ],
)
def test_each_kind_of_failure(line, kind):
    incident = match_incident(line, 42)
    assert incident.kind == kind and incident.offset == 42 and incident.text == line


def test_ordinary_lines_are_not_incidents():
    assert match_incident("step:1 - actor/pg_loss:0.1", 0) is None
