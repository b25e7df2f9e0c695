"""Other trainers' metric lines: TRL and ms-swift print a Python dict per log step.

``{'loss': 0.0, 'grad_norm': 0.08, 'reward': 1.71, …, 'epoch': 0.31}`` (TRL) and
``'loss': -0.0, …, 'global_step/max_steps': '5/3766', …`` (ms-swift, whose
opening brace can be missing in pasted logs). TRL prints no step number, so the
caller numbers those lines in order.
"""

from __future__ import annotations

import re

from tui.parsers.values import parse_value

_PAIR = re.compile(r"'(?P<key>[^']+)':\s*(?P<value>'[^']*'|[^,{}]+)")
_GLOBAL_STEP = re.compile(r"(\d+)/(\d+)")
# A dict line must carry a loss and at least this many numbers to count, so
# a config dump or an unrelated dict is not mistaken for metrics.
_MIN_NUMBERS = 3


def parse_dict_line(segment: str) -> tuple[dict[str, float], int | None, int | None] | None:
    """Return (metrics, step, total) for a trainer dict line, or None.

    ``step``/``total`` come from ms-swift's ``global_step/max_steps`` string
    and are None for TRL.
    """
    if "'loss':" not in segment:
        return None
    metrics: dict[str, float] = {}
    step = total = None
    for match in _PAIR.finditer(segment):
        key, raw = match.group("key"), match.group("value").strip()
        if raw.startswith("'"):
            if key == "global_step/max_steps":
                found = _GLOBAL_STEP.fullmatch(raw.strip("'"))
                if found:
                    step, total = int(found.group(1)), int(found.group(2))
            continue
        value = parse_value(raw)
        if value is not None:
            metrics[key] = value
    if "loss" not in metrics or len(metrics) < _MIN_NUMBERS:
        return None
    return metrics, step, total
