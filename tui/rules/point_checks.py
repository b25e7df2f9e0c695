"""Per-step judgements for the rule kinds that look at one metric's series.

Each check answers, for point ``i`` of a series, whether it breaks the rule
and why. They read only earlier points, so a series can be judged
incrementally as steps arrive.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from statistics import median
from typing import Any

# (values, index, params) → a reason if point ``index`` breaks the rule, else None.
PointCheck = Callable[["array[float]", int, dict[str, Any]], str | None]


def band(values: array[float], i: int, params: dict[str, Any]) -> str | None:
    """Outside ``[low, high]``."""
    value, low, high = values[i], params["low"], params["high"]
    if not math.isfinite(value):
        return None  # the nonfinite rule reports those
    if low is not None and value < low:
        return f"below {low:g}"
    if high is not None and value > high:
        return f"above {high:g}"
    return None


def nonfinite(values: array[float], i: int, params: dict[str, Any]) -> str | None:
    """nan or ±inf."""
    return None if math.isfinite(values[i]) else "not a finite number"


def decline(values: array[float], i: int, params: dict[str, Any]) -> str | None:
    """``steps`` consecutive moves in ``direction``, each larger than ``min_change``."""
    steps, threshold = params["steps"], params["min_change"]
    if i < steps:
        return None
    sign = -1.0 if params["direction"] == "down" else 1.0
    for j in range(i - steps, i):
        change = (values[j + 1] - values[j]) * sign
        if not change > threshold:  # also false for nan
            return None
    word = "fell" if sign < 0 else "rose"
    if steps == 1:
        return f"{word} from {values[i - 1]:.4g}"
    return f"{word} {steps} times in a row, from {values[i - steps]:.4g}"


def stuck(values: array[float], i: int, params: dict[str, Any]) -> str | None:
    """The same value (or zero, with ``zero_only``) for ``steps`` points."""
    steps = params["steps"]
    if i + 1 < steps:
        return None
    window = values[i + 1 - steps: i + 1]
    first = window[0]
    if not math.isfinite(first) or any(v != first for v in window):
        return None
    if params["zero_only"] and first != 0:
        return None
    return f"unchanged at {first:g} for {steps} steps"


def spike(values: array[float], i: int, params: dict[str, Any]) -> str | None:
    """``ratio``× above (or below) the median of the previous ``window`` points,
    for ``sustain`` points in a row (healthy RL runs have one-step blips)."""
    reason = _spike_at(values, i, params)
    for j in range(i - params["sustain"] + 1, i):
        if reason is None or j < 0 or _spike_at(values, j, params) is None:
            return None
    return reason


def _spike_at(values: array[float], i: int, params: dict[str, Any]) -> str | None:
    window, ratio = params["window"], params["ratio"]
    history = [v for v in values[max(0, i - window): i] if math.isfinite(v)]
    value = values[i]
    if len(history) < max(2, window // 2) or not math.isfinite(value):
        return None
    middle = median(history)
    if middle <= 0:
        return None  # ratios mean nothing around zero or for signed metrics
    direction = params["direction"]
    if direction in ("up", "both") and value > ratio * middle and value > params["floor"]:
        return f"{value / middle:.1f}× the recent median {middle:.4g}"
    if direction in ("down", "both") and value * ratio < middle:
        return f"{middle / value:.1f}× below the recent median {middle:.4g}" if value > 0 else \
            f"fell to {value:.4g} from a recent median of {middle:.4g}"
    return None


def jump(values: array[float], i: int, params: dict[str, Any]) -> str | None:
    """Changed by more than ``delta`` since the previous point."""
    if i < 1:
        return None
    change = values[i] - values[i - 1]
    if abs(change) > params["delta"]:  # false for nan
        return f"changed by {change:+.4g} in one step (from {values[i - 1]:.4g})"
    return None


POINT_CHECKS: dict[str, PointCheck] = {
    "band": band, "nonfinite": nonfinite, "decline": decline, "stuck": stuck,
    "spike": spike, "jump": jump,
}
