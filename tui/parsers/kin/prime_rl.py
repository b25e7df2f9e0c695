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

prime-rl's later orchestrator (2026, and the hosted ``prime train`` CLI, which prints the
level in brackets) drops the colons and names the time not at all::

    18:15:09 [SUCCESS] Step 2 |    9.5s | Reward 0.1972 | Trainable 16/16 (100.0%) | Turns 1.0 |
    Branches 1.0 | Max Off-Policy 0 | Error 0.0% | Truncation 0.0%

(``Train step N | 15m 56s | Reward … | Error … | Trainable a/b (…) | Max Off-Policy k`` in
another version): items are ``Name number``, and the first, a duration alone, is the step's
time. ``Eval step N (env) | …`` lines are evaluations, not steps.
"""

from __future__ import annotations

import re

from tui.parsers.records import Record, RunEndRecord, StepRecord

NEEDLES: tuple[bytes, ...] = (b"SUCCESS Step ", b"SUCCESS] Step ", b"SUCCESS Train step ",
                               b"SUCCESS] Train step ", b"SUCCESS Orchestrator finished")

_LINE = re.compile(r"\bSUCCESS\]? (?:Train s|S)tep (?P<step>\d+) \| (?P<items>.+)$")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# ``Reward 0.1972``, ``Trainable 16/16 (100.0%)``: a name, then its number.
_NAMED = re.compile(r"(?P<name>[A-Za-z][^\d|]*?)\s+(?P<raw>[-+]?\.?\d.*)")
# The later orchestrator's unnamed step time: ``9.5s``, ``15m 56s``, ``1h 2m 3s``.
_DURATION = re.compile(r"(?:(?P<h>\d+)h\s*)?(?:(?P<m>\d+)m\s*)?(?:(?P<s>\d+(?:\.\d+)?)s)?")
_NAMES = {"Time": "step_time"}


def _key(name: str) -> str:
    """``Grad. Norm`` → ``grad_norm``: the name as the other trainers' keys are spelled."""
    return _NAMES.get(name) or "_".join(name.replace(".", "").lower().split())


class PrimeRlLines:
    """prime-rl's orchestrator and trainer step lines (no state across lines)."""

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        if "SUCCESS" not in segment:
            return None
        if "SUCCESS Orchestrator finished" in segment:
            return [RunEndRecord(offset)]
        match = _LINE.search(segment)
        if match is None:
            return None
        metrics: dict[str, float] = {}
        for index, item in enumerate(match.group("items").split(" | ")):
            name, colon, raw = item.partition(": ")
            if not colon:
                seconds = _seconds(item.strip()) if index == 0 else None
                if seconds is not None:
                    metrics["step_time"] = seconds
                    continue
                named = _NAMED.fullmatch(item.strip())
                if named is None:
                    continue
                name, raw = named.group("name"), named.group("raw")
            number = _NUMBER.match(raw.strip())
            if number is not None and name.strip():
                metrics[_key(name.strip())] = float(number.group())
        return [StepRecord(int(match.group("step")), metrics, offset, end)] if metrics else []


def _seconds(text: str) -> float | None:
    """``15m 56s`` → 956.0; None for anything but such a duration."""
    match = _DURATION.fullmatch(text)
    if match is None or not any(match.groupdict().values()):
        return None
    hours, minutes, seconds = (float(match.group(unit) or 0) for unit in "hms")
    return hours * 3600 + minutes * 60 + seconds
