"""NeMo-RL's per-step report: a ``Step N/M`` banner, then bullet lines.

Grammar (GRAMMAR.md, "nemo-rl-blocks"), from ``nemo_rl/algorithms/grpo.py``
(``grpo_train``, ``async_grpo_train``, ``validate``) and its SFT/DPO kin::

    ========================= Epoch 1/1 =========================
    ========================= Step 3/100 =========================
    ▶ Preparing batch...
    …
    📊 Training Results:
      • Loss: 0.0123
      • Generation KL Error: 0.0012
      • Avg Reward: 0.5000
      • Mean Generation Length: 345.0000

    ⏱️  Timing:
      • Total step time: 45.23s
      • generation: 20.00s (44.2%)

    📊 Validation Results:
        • Accuracy: 0.4500
        • Average response length: 812.3 tokens
        • Samples processed: 500

      ⏱️  Validation Timing:
        • Total validation time: 60.12s

The metric lines carry no step and no block name, and a remote grep brings only
lines holding a needle, so the headers (``📊 Training Results:``) may never
arrive. Every line this grammar needs is therefore readable on its own: the
banner sets the current step (a needle line, ``= Step ``), and each bullet
(needle ``• ``) is a ``name: number`` whose block follows from its shape —
four spaces of indent is validation, ``Xs (Y%)`` or ``Total step time`` is
timing, anything else is a training result. Each bullet becomes a one-metric
step record at the current step; the model merges them. Lines before the first
banner (the initial validation) are step 0.

Step numbers: the synchronous loop counts steps within an epoch
(``Step {current_step + 1}/{min(len(dataloader), max_num_steps)}``) and starts
again at 1 in the next epoch; the asynchronous loop counts the run. A banner
number lower than the previous one therefore continues the run's count. The
run length is the banner's M times the epochs of ``Epoch e/E`` (an upper
bound when ``max_num_steps`` cuts the last epoch short; NeMo-RL then says
``Max number of steps has been reached, stopping training early``, an end).
"""

from __future__ import annotations

import re

from tui.parsers.kin.values import kin_value
from tui.parsers.records import Record, RunEndRecord, StepRecord, TotalStepsRecord

# The bullet is grepped without its indent: grep searches from a needle's first
# byte, and a space first is the slowest start of all (``  • `` cost a quarter of
# grep's time on a 400 MB chatter log, ``• `` nothing). The banner's ``== Step `` costs
# more on chatter full of ``=====`` rules (seed 001's reward prints), but every other
# part of the banner holds the step number, and ``Step 1``… would bring every
# "Step 1:" of printed reasoning along (NeMo-RL draws its rules 25 ``=`` long).
NEEDLES: tuple[bytes, ...] = (
    b"== Step ",
    b"== Epoch ",
    "\u2022 ".encode(),
    b"stopping training early",
)

_BANNER = re.compile(r"=+ (Step|Epoch) (\d+)/(\d+) =+")
_BULLET = re.compile(r"^(?P<indent> +)\u2022 (?P<name>[^:]+?): (?P<value>\S+)(?P<rest>.*)$")
_PERCENT_TAIL = re.compile(r"^\s*\(\s*[\d.]+%\)\s*$")
# NeMo-RL's own metric names (what it logs to wandb/TensorBoard) for the printed labels.
_TRAIN_KEYS = {
    "Loss": "train/loss",
    "Draft Loss": "train/draft_loss",
    "Generation KL Error": "train/gen_kl_error",
    "Avg Reward": "train/reward",
    "Avg Filtered Reward": "train/filtered_reward",
    "Avg Total Reward": "train/total_reward",
    "Mean Generation Length": "train/mean_gen_tokens_per_sample",
    "Avg Advantage": "train/advantage",
}
_VALIDATION_KEYS = {
    "Accuracy": "validation/accuracy",
    "Average response length": "validation/avg_length",
}


def _slug(name: str) -> str:
    return re.sub(r"[^0-9a-z@]+", "_", name.lower()).strip("_")


class NemoRlLines:
    """NeMo-RL banners and bullets, with the step they belong to."""

    def __init__(self) -> None:
        self._step = 0
        self._base = 0          # steps of the epochs before this one (sync loop)
        self._last_banner = 0
        self._per_epoch: int | None = None
        self._epochs = 1
        self._seen = False

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        if "== Step " in segment or "== Epoch " in segment:
            return self._banner(segment, offset)
        if "\u2022 " in segment:
            return self._bullet(segment, offset, end)
        if "stopping training early" in segment and self._seen:
            return [RunEndRecord(offset)]
        return None

    def _banner(self, segment: str, offset: int) -> list[Record] | None:
        match = _BANNER.search(segment)
        if match is None:
            return None
        kind, number, of = match.group(1), int(match.group(2)), int(match.group(3))
        self._seen = True
        if kind == "Epoch":
            self._epochs = max(self._epochs, of)
            return self._total(offset)
        if number < self._last_banner:
            self._base += self._last_banner
        self._last_banner = number
        self._step = self._base + number
        self._per_epoch = of
        return self._total(offset)

    def _total(self, offset: int) -> list[Record]:
        if self._per_epoch is None:
            return []
        return [TotalStepsRecord(self._per_epoch * self._epochs, offset)]

    def _bullet(self, segment: str, offset: int, end: int) -> list[Record] | None:
        match = _BULLET.match(segment.rstrip())
        if match is None:
            return None
        name, raw, rest = match.group("name").strip(), match.group("value"), match.group("rest")
        indent = len(match.group("indent"))
        if len(name) > 60:
            return None
        timing = raw.endswith("s") and (_PERCENT_TAIL.match(rest) or name.startswith("Total "))
        value = kin_value(raw[:-1] if timing else raw.rstrip("%"))
        if value is None:
            return None
        step = self._step
        if indent >= 4:
            key = ("timing/validation/" + _slug(name)) if timing else \
                _VALIDATION_KEYS.get(name, "validation/" + _slug(name))
        elif timing:
            key = "timing/train/" + _slug(name)
        else:
            key = _TRAIN_KEYS.get(name, "train/" + _slug(name))
        if not self._seen:
            # No banner yet: an excerpt that starts inside a step, or the initial
            # validation (step 0). Only NeMo-RL's own labels are taken (a bullet in
            # someone's text is not), training results as the first step.
            if indent >= 4 and name in _VALIDATION_KEYS:
                step = 0
            elif indent < 4 and (name in _TRAIN_KEYS or timing):
                step = 1
            else:
                return None
        return [StepRecord(step, {key: value}, offset, end)]
