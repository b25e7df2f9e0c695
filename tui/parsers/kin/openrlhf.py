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

``kl`` is the KL between the actor and the initial (reference) model.
"""

from __future__ import annotations

import re

from tui.parsers.kin.dict_literal import dict_metrics
from tui.parsers.kin.values import kin_value
from tui.parsers.records import ProgressRecord, Record, StepRecord

NEEDLES: tuple[bytes, ...] = (b"Global step ",)

_EPISODE = re.compile(r"^Episode \[(\d+)/(\d+)\]$")
_POSTFIX = re.compile(r"(?:s/it|it/s),\s*(?P<postfix>[\w./()-]+=[^\]]*)\]")
_GLOBAL = re.compile(r"Global step (\d+): \{(?=')")


class OpenRlhfLines:
    """Reads OpenRLHF's status; knows how many steps the Episode bar has counted."""

    def __init__(self) -> None:
        self._done = 0

    def on_bar(self, bar: ProgressRecord, segment: str) -> list[Record]:
        episode = _EPISODE.match(bar.desc)
        if episode is not None and bar.total:
            self._done = (int(episode.group(1)) - 1) * bar.total + bar.n
            return []
        if not bar.desc.startswith("Train epoch ["):
            return []
        match = _POSTFIX.search(segment)
        if match is None:
            return []
        metrics = {}
        for item in match.group("postfix").split(","):
            key, eq, raw = item.strip().partition("=")
            value = kin_value(raw) if eq else None
            if value is not None and key:
                metrics[key] = value
        return [StepRecord(self._done + 1, metrics, bar.offset, bar.offset + len(segment))] if metrics else []

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        if "Global step " not in segment:
            return None
        match = _GLOBAL.search(segment)
        if match is None:
            return None
        metrics, _ = dict_metrics(segment, match.end())
        return [StepRecord(int(match.group(1)), metrics, offset, end)] if metrics else []
