"""tqdm progress bars: ``Training Progress:  15%|██▌ | 49/320 [1:06:07<4:11:40, 55.72s/it]``.

verl's trainer bar is ``Training Progress``; its SFT trainer draws
``Epoch 1/6`` bars. The kin trainers' run bars: EasyR1's ``Running step``,
SkyRL's ``Training Batches Processed``, ms-swift's ``Train``, OpenRLHF's
``Episode [1/2]`` (steps within one episode), and the HF Trainer's bar with no
description at all, which the kin grammars mark as ``training`` once a metric
dict shows it is the trainer's. Other bars (vLLM's ``Processed prompts``,
checkpoint loading, OpenRLHF's per-update ``Train epoch [1/1]``) are parsed
too and told apart by their description.
"""

from __future__ import annotations

import re

from tui.parsers.records import ProgressRecord

# Counts are integers, or tqdm's ``unit_scale`` sizes, which Ray's ``tqdm_ray`` (the
# bars of Ray actors, EasyR1's ``Running step 0:``) always draws: three significant
# digits, ``4.00/60.0``, ``14.0/1.75k``, and rates like ``1.54ks/it``.
_SIZE = r"\d+(?:\.\d+)?[kMGTPEZY]?"
_BAR = re.compile(
    r"(?P<desc>[^|]{0,200}?)\s*:?\s*(?P<pct>\d{1,3})%\|[^|]{0,400}\|\s*"
    rf"(?P<n>{_SIZE})/(?P<total>{_SIZE})\s*"
    r"(?:\[(?P<elapsed>[\d:]+)(?:<(?P<eta>[\d:?]+))?"
    r"(?:,\s*(?P<rate>[\d.]+[kMGTPEZY]?|\?)\s*(?P<unit>s/it|it/s))?)?"
)
_SCALE = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21, "Y": 1e24}
# Ray's tqdm_ray names a bar ``f"{desc} {position}"``.
_RAY_POSITION = re.compile(r" \d+$")
_EPOCH = re.compile(r"Epoch (\d+)/(\d+)|^Episode \[(\d+)/(\d+)\]$")
# Bars that count the run's steps directly.
_RUN_BARS = ("Training Progress", "Running step", "Training Batches Processed")
# tqdm bars are short; looking further than this only invites slow regex
# work on pathological lines.
_MAX_BAR_CHARS = 2048


def parse_duration(text: str | None) -> float | None:
    """tqdm's ``[H:]MM:SS`` (hours may exceed 24) in seconds; None for ``?``."""
    if not text or "?" in text:
        return None
    total = 0.0
    for part in text.split(":"):
        if not part.isdigit():
            return None
        total = total * 60 + int(part)
    return total


def parse_bar(segment: str, offset: int) -> ProgressRecord | None:
    """Parse the first tqdm bar in ``segment``, or None."""
    if "%|" not in segment:
        return None
    match = _BAR.search(segment[:_MAX_BAR_CHARS])
    if match is None:
        return None
    n, total = _count(match.group("n")), _count(match.group("total"))
    if n is None or total is None:
        return None  # a rounded size (``1.75k``) is no step count to go by
    rate, unit = match.group("rate"), match.group("unit")
    sec_per_it = None
    per = _scaled(rate) if rate and rate != "?" else None
    if per:
        sec_per_it = per if unit == "s/it" else 1.0 / per
    return ProgressRecord(
        desc=match.group("desc").strip(),
        n=n,
        total=total,
        elapsed_s=parse_duration(match.group("elapsed")),
        eta_s=parse_duration(match.group("eta")),
        sec_per_it=sec_per_it,
        offset=offset,
    )


def _scaled(text: str) -> float:
    """tqdm's ``format_sizeof`` back to a number: ``1.54k`` is 1540."""
    suffix = text[-1] if text[-1] in _SCALE else ""
    return float(text[: len(text) - len(suffix)]) * _SCALE[suffix]


def _count(text: str) -> int | None:
    """A bar's count as an exact integer; None for a size tqdm rounded (``1.75k``):
    below 1000 ``unit_scale`` still writes every integer exactly (``4.00``, ``60.0``)."""
    if text[-1] in _SCALE:
        return None
    value = float(text)
    return int(value) if value.is_integer() else None


def training_position(record: ProgressRecord) -> tuple[int, int] | None:
    """(steps done, total steps) if this bar tracks training, else None.

    ``Training Progress`` (and the kin's run bars) count steps directly; an
    ``Epoch e/E`` or ``Episode [e/E]`` bar counts steps within one epoch or
    episode, so the run position is scaled by their number.
    """
    if record.total is None:
        return None
    desc = _RAY_POSITION.sub("", record.desc)
    if record.training or desc.endswith(_RUN_BARS) or desc == "Train":
        return record.n, record.total
    epoch = _EPOCH.search(record.desc)
    if epoch is not None:
        current, epochs = (int(g) for g in (epoch.groups()[:2] if epoch.group(1) else epoch.groups()[2:]))
        return (current - 1) * record.total + record.n, epochs * record.total
    return None
