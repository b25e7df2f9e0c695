"""prime-rl's step lines (PrimeIntellect's async RL: an orchestrator that generates rollouts
with verifiers environments, a trainer that learns from them, each logging on its own).

Grammar (GRAMMAR.md, "prime-rl-step"), from prime-rl's ``orchestrator/orchestrator.py`` and
``trainer/rl/train.py`` (``step_message``, logged by loguru at level SUCCESS with the time in
front) and real logs (prime-rl PRs 1318, 2280)::

    02:33:26 SUCCESS Step 28 | Time: 73.77s | Reward: 0.3887 | Throughput: 2408.9 tokens/s |
    Seq. Length: 345.6 tokens/sample | Async Level: 1 | Max. Off-Policy Level: 0

(one line; the orchestrator's), and the trainer's ``Step N | Time: … | Loss: 0.0123 |
Entropy: 0.4567 | Mismatch KL: 0.0012 | Grad. Norm: 0.2345 | LR: 1.00e-06 | Throughput: 5321
tokens/s | MFU: 12.3% | Peak Mem.: 45.1 GiB``. Items are ``Name: number[unit]``; the
number is what counts (``Peak Mem.: 45.1/80.0 GiB (56.4%)`` is the peak). Names become keys
as the other trainers spell them (``Reward`` → ``reward``, ``Grad. Norm`` → ``grad_norm``,
``Time`` → ``step_time``) so the same panels fill; ``Mismatch KL`` (trainer vs inference
engine, not the reference policy) stays ``mismatch_kl``. The orchestrator's ``Orchestrator
finished.`` is the run's end.
"""

from __future__ import annotations

import re

from tui.parsers.records import Record, RunEndRecord, StepRecord

NEEDLES: tuple[bytes, ...] = (b"SUCCESS Step ", b"SUCCESS Orchestrator finished")

_LINE = re.compile(r"\bSUCCESS Step (?P<step>\d+) \| (?P<items>.+)$")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_NAMES = {"Time": "step_time"}


def _key(name: str) -> str:
    """``Grad. Norm`` → ``grad_norm``: the name as the other trainers' keys are spelled."""
    return _NAMES.get(name) or "_".join(name.replace(".", "").lower().split())


class PrimeRlLines:
    """prime-rl's orchestrator and trainer step lines (no state across lines)."""

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        if "SUCCESS " not in segment:
            return None
        if "SUCCESS Orchestrator finished" in segment:
            return [RunEndRecord(offset)]
        match = _LINE.search(segment)
        if match is None:
            return None
        metrics: dict[str, float] = {}
        for item in match.group("items").split(" | "):
            name, colon, raw = item.partition(": ")
            number = _NUMBER.match(raw.strip()) if colon else None
            if number is not None and name.strip():
                metrics[_key(name.strip())] = float(number.group())
        return [StepRecord(int(match.group("step")), metrics, offset, end)] if metrics else []
