"""Megatron-LM's ``training_log`` line, as Megatron-SWIFT (ms-swift's ``megatron sft/rlhf``,
GRPO and DPO included) and Megatron-LM itself print it.

Grammar (GRAMMAR.md, "megatron-iteration"), from Megatron-LM's
``megatron/training/training.py`` ``training_log`` and ms-swift's Megatron trainers, and
real logs (ms-swift 6718, 8173): one line per logged iteration, items ending in `` |``::

     [2026-03-03 16:38:36] iteration        2/     624 | consumed samples:          256 |
     elapsed time per iteration (ms): 3988.6 | memory(GiB): 83.46 | elapsed time: 3m 8s |
     remaining time: 16h 12m 43s | learning rate: 9.999746E-07 | global batch size:   128 |
     loss: -2.529132E-02 | kl: 1.107648E-02 | reward: 7.636719E-01 | … | loss scale: 1.0 |
     grad norm: 75.173 | num zeros: 92172.0 | number of skipped iterations:   0 |
     number of nan iterations:   0 |

(one physical line). The time in brackets is absent in older Megatron-LM. ``N/M`` is the
iteration and ``--train_iters``: the step and the run's length. Each loss is printed
``{:.6E}`` (``lm loss`` in pre-training, ``loss`` and the GRPO/DPO metrics in ms-swift);
keys hold spaces, ``/`` and parentheses and are kept as printed; values that are not
numbers (``3m 8s``) are skipped, and so is the last item of a line cut before its `` |``.
"""

from __future__ import annotations

import re

from tui.parsers.kin.values import kin_value
from tui.parsers.records import Record, StepRecord, TotalStepsRecord

NEEDLES: tuple[bytes, ...] = (b"| consumed samples:",)

_LINE = re.compile(r"(?:^|[\s\]])iteration\s+(?P<n>\d+)/\s*(?P<total>\d+)\s*\|(?P<items>.*)$")


class MegatronLines:
    """Megatron-LM's iteration lines (the grammar holds no state across lines)."""

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        if "| consumed samples:" not in segment:
            return None
        match = _LINE.search(segment)
        if match is None:
            return None
        items = match.group("items").split(" | ")
        if not items[-1].rstrip().endswith("|"):
            items.pop()  # cut by a paste or a buffer: its value may have lost digits
        metrics: dict[str, float] = {}
        for item in items:
            key, colon, raw = item.strip(" |").partition(": ")
            value = kin_value(raw) if colon else None
            if value is not None and key:
                metrics[key] = value
        step, total = int(match.group("n")), int(match.group("total"))
        records: list[Record] = [TotalStepsRecord(total, offset)] if total else []
        if metrics:
            records.append(StepRecord(step, metrics, offset, end))
        return records
