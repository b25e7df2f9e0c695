"""SkyRL (skyrl-train): the console logger's pretty-printed dict and the reward line.

Grammar (GRAMMAR.md, "skyrl"), from NovaSky-AI/SkyRL's ``skyrl/train/utils/tracking.py``
(``ConsoleLogger``, used with ``trainer.logger="console"``) and ``trainer.py``::

    2025-09-01 10:00:00.000 | INFO | skyrl_train.utils.tracking:log:138 - Step 3:
    {'generate/avg_num_tokens': '512.2500',
     'loss/avg_kl': '0.0012',
     'policy/grad_norm': '0.3125',
     'policy/policy_entropy': '0.8123',
     'policy/policy_kl': '0.0009',
     'policy/policy_loss': '-0.0123',
     'reward/avg_raw_reward': '0.4500',
     'timing/step': '84.1234',
     'trainer/global_step': 3}

``pprint`` sorts the keys and breaks the dict one item per line; floats are
strings with four decimals, ints bare. Every step, whatever the logger, the
trainer also logs (loguru, after a ``(skyrl_entrypoint pid=…)`` Ray prefix)::

    … | INFO | skyrl.train.trainer:train:1117 - reward/avg_pass_at_4: 0.5625, reward/avg_raw_reward: 0.328125, …
    … | INFO | skyrl.train.trainer:train:210 - Finished: 'step', time cost: 1331.13s
    … | INFO | skyrl.train.trainer:train:320 - {'final_loss': -0.00014, 'policy_loss': -0.00014,
        'policy_entropy': 0.3656, 'response_length': 1024.0, 'policy_lr': 1e-06,
        'loss_metrics/clip_ratio': 0.00096, 'policy_kl': 0.00041, 'grad_norm': 0.37}
    Training Batches Processed:  14%|█▍        | 1/7 [22:36<2:15:37, 1356.23s/it]

(the policy's training status, on one line; a real log's shape, seen in a public
file the corpus could not cite). The run bar ``Training Batches Processed``
(read by the scanner) ticks after the step's lines, so those lines belong to
the step after the bar's count.

Only needle lines may arrive, so the rows are read one by one; the ``Step N:``
header holds no needle, so the rows wait until ``'trainer/global_step': N``
gives their step (it sorts after every key the dashboard uses). The reward line,
printed before its step is logged, belongs to the step after the last one seen.
"""

from __future__ import annotations

import re

from tui.parsers.kin.dict_literal import dict_metrics, read_items
from tui.parsers.kin.values import kin_value
from tui.parsers.records import ProgressRecord, Record, StepRecord

# Each needle costs every byte of a local read and grep's time on the box, so only
# the rows the panels use: the block's policy rows, its reward and its step; the step
# time and response length come from the lines every run prints.
NEEDLES: tuple[bytes, ...] = (
    b"reward/avg_raw_reward",    # the per-step reward line and the block's reward row
    b"'policy/",                 # the block's policy rows
    b"'trainer/global_step'",    # the block's step
    b"'policy_loss':",           # the policy's status dict (OpenRLHF's Global step dict too)
    b"Finished: 'step'",         # the step's time
)

_ROW = re.compile(r"^\s*\{?'[\w./@()-]+': ")
_INFO = re.compile(r"(?P<key>reward/[\w@.]+): (?P<value>[-+\w.]+)")
_STEP_TIME = re.compile(r"Finished: 'step', time cost: ([\d.]+)s")
_MAX_WAITING = 64


class SkyRlLines:
    """SkyRL's rows; remembers the step of the block being printed."""

    def __init__(self) -> None:
        self._step: int | None = None
        self._last: int | None = None
        self._bar_done: int | None = None
        self._waiting: list[tuple[dict[str, float], int, int]] = []

    def on_bar(self, bar: ProgressRecord) -> None:
        if bar.desc.endswith("Training Batches Processed"):
            self._bar_done = bar.n

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        if "reward/avg_raw_reward:" in segment:
            return self._info(segment, offset, end)
        if "Finished: 'step'" in segment:
            found = _STEP_TIME.search(segment)
            if found is None:
                return None
            return [StepRecord(self._next_step(), {"timing/step": float(found.group(1))}, offset, end)]
        if "'policy_loss':" in segment and not _ROW.match(segment):
            return self._status(segment, offset, end)
        if not _ROW.match(segment):
            return None
        items, _, closed = read_items(segment.strip().lstrip("{"), 0, stop_at_close=False)
        metrics = {}
        for item in items:
            value = kin_value(item.value)
            if value is not None:
                metrics[item.key] = value
        global_step = metrics.get("trainer/global_step")
        if global_step is not None and self._step is None:
            # No header seen: the rows so far were this step's. The rows sorted after
            # this one are not awaited, or they would be taken for the next block's.
            self._step = int(global_step)
            waiting, self._waiting = self._waiting, []
            records: list[Record] = [StepRecord(self._step, m, o, e) for m, o, e in waiting]
            return records + self._row(metrics, offset, end, closed=True)
        if self._step is None:
            if metrics and len(self._waiting) < _MAX_WAITING:
                self._waiting.append((metrics, offset, end))
            return []
        return self._row(metrics, offset, end, closed)

    def _row(self, metrics: dict[str, float], offset: int, end: int, closed: bool) -> list[Record]:
        step = self._step
        if step is None:
            return []
        self._last = step if self._last is None else max(self._last, step)
        if closed:
            self._step = None  # the dict's closing brace: the block is over
        return [StepRecord(step, metrics, offset, end)] if metrics else []

    def _next_step(self) -> int:
        """The step being made: the one after the bar's count (or after the last step seen)."""
        if self._bar_done is not None:
            return self._bar_done + 1
        return self._last + 1 if self._last is not None else 1

    def _info(self, segment: str, offset: int, end: int) -> list[Record]:
        metrics = {}
        for match in _INFO.finditer(segment):
            value = kin_value(match.group("value").rstrip(","))
            if value is not None:
                metrics[match.group("key")] = value
        return [StepRecord(self._next_step(), metrics, offset, end)] if metrics else []

    def _status(self, segment: str, offset: int, end: int) -> list[Record] | None:
        start = segment.find("{'")
        if start < 0:
            return None
        metrics, _ = dict_metrics(segment, start + 1)
        if "policy_loss" not in metrics:
            return None
        return [StepRecord(self._next_step(), metrics, offset, end)]
