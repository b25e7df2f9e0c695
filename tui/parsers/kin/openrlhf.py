"""OpenRLHF: the PPO trainer's bar postfix and its ``Global step N: {…}`` lines.

Grammar (GRAMMAR.md, "openrlhf"), from OpenRLHF's ``openrlhf/trainer/ppo_trainer.py``
and ``ray/ppo_actor.py`` across versions and the corpus (044):

* ``Episode [i/n]: 8%|▊ | 1/12 [03:32<38:52, 212.0s/it]`` — one tick per
  rollout batch, i.e. per global step; the scanner reads it as the run position
  ((i-1)·total + done of n·total).
* ``Train epoch [1/1]: 100%|██| 8/8 [00:30<00:00, 3.80s/it, act_loss=-0.0123,
  reward=0.5, return=…, gen_len=312, tot_len=…, kl=0.0012, act_lr=1e-06,
  grad_norm=0.3]`` — the actor's PPO update of the step being made; the critic's
  bar carries ``critic_loss``, ``values``, ``critic_lr``. Until 2024 the names
  were short: ``pg``, ``rm``, ``ret``, ``glen``, ``tlen``, ``kl``, ``act_lr``,
  ``cri``, ``vals``, ``ptx``. tqdm writes numbers with 3 significant digits
  (``1e-06``, ``-0.0123``). These values belong to the step after the last
  ``Episode`` tick (the Episode bar ticks when the step is done).
* ``✨ Global step 12: {'policy_loss': …, 'reward': …, 'kl': …, …}`` (2025+, the
  ``✨`` since 2026) — the whole status of step 12.
* The other trainers (SFT, reward model, DPO, KD: ``openrlhf/trainer/sft_trainer.py`` and
  kin) draw ``Train epoch: 0%| | 0/3`` (epochs) first, then per epoch
  ``Train step of epoch 0: 42%|▍ | 105/250 [… 20.2s/it, gpt_loss=0.686, distil_loss=0.9,
  loss_mean=0.575, lr=5e-7]`` (its batches, the epoch numbered from 0, the postfix the
  losses of the last one). The run position is epoch·batches + n of epochs·batches,
  known once the epoch bar has said how many epochs there are.

``kl`` is the KL between the actor and the initial (reference) model.
"""

from __future__ import annotations

import dataclasses
import re

from tui.parsers.kin.dict_literal import dict_metrics
from tui.parsers.kin.values import kin_value
from tui.parsers.records import ProgressRecord, Record, StepRecord

NEEDLES: tuple[bytes, ...] = (b"Global step ",)

_EPISODE = re.compile(r"^Episode \[(\d+)/(\d+)\]$")
_EPOCH_STEP = re.compile(r"^Train step of epoch (\d+)$")
# tqdm closes the postfix with ``]``; a line without it was cut (a paste, an excerpt), and
# its last pair may be cut inside the number, so that one is not taken.
_POSTFIX = re.compile(r"(?:s/it|it/s),\s*(?P<postfix>[\w./()-]+=[^\]]*)(?P<end>\]|$)")
_GLOBAL = re.compile(r"Global step (\d+): \{(?=')")


class OpenRlhfLines:
    """Reads OpenRLHF's status; knows how many steps the Episode bar has counted, and how
    many epochs the other trainers' epoch bar announced."""

    def __init__(self) -> None:
        self._done = 0
        self._epochs: int | None = None

    def on_bar(self, bar: ProgressRecord, segment: str) -> tuple[ProgressRecord, list[Record]]:
        """The bar (an epoch's batch bar made the run's own) and the metrics of its postfix."""
        episode = _EPISODE.match(bar.desc)
        if episode is not None and bar.total:
            self._done = (int(episode.group(1)) - 1) * bar.total + bar.n
            return bar, []
        if bar.desc == "Train epoch" and bar.total:
            self._epochs = bar.total
            return bar, []
        epoch_step = _EPOCH_STEP.match(bar.desc)
        if epoch_step is not None and bar.total:
            step = int(epoch_step.group(1)) * bar.total + bar.n
            if self._epochs is not None:
                bar = dataclasses.replace(bar, n=step, total=self._epochs * bar.total, training=True)
            return bar, self._postfix(bar, segment, step)
        if not bar.desc.startswith("Train epoch ["):
            return bar, []
        return bar, self._postfix(bar, segment, self._done + 1)

    @staticmethod
    def _postfix(bar: ProgressRecord, segment: str, step: int) -> list[Record]:
        """The ``name=value`` pairs tqdm writes after the rate, as the metrics of ``step``."""
        match = _POSTFIX.search(segment)
        if match is None:
            return []
        metrics = {}
        items = match.group("postfix").split(",")
        for item in items if match.group("end") else items[:-1]:
            key, eq, raw = item.strip().partition("=")
            value = kin_value(raw) if eq else None
            if value is not None and key:
                metrics[key] = value
        return [StepRecord(step, metrics, bar.offset, bar.offset + len(segment))] if metrics else []

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        if "Global step " not in segment:
            return None
        match = _GLOBAL.search(segment)
        if match is None:
            return None
        metrics, _ = dict_metrics(segment, match.end())
        return [StepRecord(int(match.group(1)), metrics, offset, end)] if metrics else []
