"""slime and Miles (its fork): ``perf N: {…}``, ``rollout N: {…}``, ``step N: {…}`` lines.

Grammar (GRAMMAR.md, "slime-dict"), from slime's source
(``slime/observability/train_metric_utils.py``, ``rollout_metrics.py``,
``backends/megatron_utils/model.py``) and real logs: a Python logger line
``[2026-04-15 07:57:53] rollout.py:1193 - perf 0: {'rollout/…': …}`` (Miles:
``[… actor_cell0_rank0] log_utils.py:259 - rollout 0: {…}``), usually after a Ray
prefix (``(MegatronTrainRayActor pid=…)``, ``(RolloutManager pid=…)``), sometimes
with ``[repeated 7x across cluster]`` after the dict. The name before the number:

* ``rollout N`` — the trainer's view of rollout N (``rollout/raw_reward``,
  ``rollout/response_lengths``, ``rollout/kl``…); ``perf N`` — timings and
  throughput of rollout N, from the rollout manager (``perf/rollout_time``, and
  ``rollout/…`` since 2026) and from the trainer (``perf/step_time``…);
  ``eval N`` — ``eval/<dataset>`` scores; ``multi_turn N``, ``passrate N``.
* ``step N`` / ``critic-step N`` — one optimizer step (``train/loss``,
  ``train/pg_loss``, ``train/kl_loss``, ``train/grad_norm``…). N counts optimizer
  steps (rollout_id × steps per rollout + i), not rollouts.

rlwatch's step is the rollout id. A ``step`` line belongs to the rollout the
trainer reported last (``rollout N``, else ``perf N``); before any, to its own
number. The rollout manager generates rollout N+1 while the trainer trains N
(``train_async``), so its ``perf N+1`` can come before the trainer's ``step N``;
a step number never counts fewer than the rollout it belongs to, so a ``perf``
ahead of it is not taken. ``num_rollout ....... 100`` in the argument dump gives the run length:
rollout ids count from 0, so the last step is ``num_rollout - 1``.
Values may be ``np.float64(…)`` (the rollout manager's numpy scalars).
"""

from __future__ import annotations

import re

from tui.parsers.kin.dict_literal import dict_metrics
from tui.parsers.records import Record, StepRecord, TotalStepsRecord

NEEDLES: tuple[bytes, ...] = (
    b": {'train/",
    b": {'rollout/",
    b": {'perf/",
    b": {'eval/",
    b"num_rollout ..",
)

_LINE = re.compile(r"(?<![\w/-])(?P<name>(?:critic-)?step|rollout|perf|eval|multi_turn|passrate)"
                   r" (?P<n>\d+): \{(?=')")
_NUM_ROLLOUT = re.compile(r"(?:^|\s)num_rollout \.+ (\d+)\s*$")


class SlimeLines:
    """slime's metric lines, with the rollout the optimizer steps belong to."""

    def __init__(self) -> None:
        self._rollout: int | None = None
        self._perf: int | None = None

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        if "num_rollout" in segment:
            found = _NUM_ROLLOUT.search(segment)
            if found is not None and int(found.group(1)) > 0:
                return [TotalStepsRecord(int(found.group(1)) - 1, offset)]
        if ": {'" not in segment:
            return None
        match = _LINE.search(segment)
        if match is None:
            return None
        metrics, dropped = dict_metrics(segment, match.end())
        name, number = match.group("name"), int(match.group("n"))
        if name.endswith("step"):
            if self._rollout is not None:
                step = self._rollout
            elif self._perf is not None:
                step = min(self._perf, number)
            else:
                step = number
        else:
            step = number
            if name == "rollout":
                self._rollout = number
            elif name == "perf":
                self._perf = number
        if not metrics:
            return []
        return [StepRecord(step, metrics, offset, end, dropped)]
