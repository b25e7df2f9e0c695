"""Per-step judgements for the rule kinds that look at one metric's series.

Each check answers, for point ``i`` of a series, whether it breaks the rule
and why. They read only earlier points, so a series can be judged
incrementally as steps arrive.

Asking every point costs a few Python calls each: a run's first judging is
~50 series × 1,120 points × a dozen rules, and a fleet opens twenty runs at
once. So each check has a *suspects* pass beside it: one tight loop over a
range of points that yields every point which may break the rule (never
missing one: the tests hold each pass to its check on random series), and
the check is asked only about those, for its verdict and its words.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, insort
from collections.abc import Callable, Iterator
from statistics import median
from typing import Any

# (values, index, params) → a reason if point ``index`` breaks the rule, else None.
PointCheck = Callable[["array[float]", int, dict[str, Any]], str | None]
# (values, start, end, params) → the points of [start, end) the check must be asked about.
Suspects = Callable[["array[float]", int, int, dict[str, Any]], Iterator[int]]


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
    """``steps`` consecutive moves in ``direction``, each larger than ``min_change``, and
    together more than ``noise`` × the metric's usual step-to-step change (when set)."""
    steps, threshold = params["steps"], params["min_change"]
    if i < steps:
        return None
    sign = -1.0 if params["direction"] == "down" else 1.0
    for j in range(i - steps, i):
        change = (values[j + 1] - values[j]) * sign
        if not change > threshold:  # also false for nan
            return None
    word = "fell" if sign < 0 else "rose"
    beyond = ""
    if params["noise"] > 0:
        usual = _usual_change(values, i - steps, params["window"])
        total = abs(values[i] - values[i - steps])
        if usual is None or not total > params["noise"] * usual:
            return None  # too early to know the noise, or within it
        beyond = f" ({total / usual:.1f}× its usual step-to-step change {usual:.3g})" if usual else ""
    if steps == 1:
        return f"{word} from {values[i - 1]:.4g}{beyond}"
    return f"{word} {steps} times in a row, from {values[i - steps]:.4g}{beyond}"


def _usual_change(values: array[float], before: int, window: int) -> float | None:
    """The median size of the step-to-step changes over the ``window`` moves up to point
    ``before``: the metric's own noise (None while fewer than half the window is known)."""
    recent = values[max(0, before - window): before + 1]
    changes = [abs(b - a) for a, b in zip(recent, recent[1:]) if math.isfinite(b - a)]
    if len(changes) < _enough_history(window):
        return None
    return median(changes)


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
    window = params["window"]
    history = [v for v in values[max(0, i - window): i] if math.isfinite(v)]
    value = values[i]
    if len(history) < _enough_history(window) or not math.isfinite(value):
        return None
    middle = median(history)
    way = _spike_way(value, middle, params)
    if way == "up":
        return f"{value / middle:.1f}× the recent median {middle:.4g}"
    if way == "down":
        return f"{middle / value:.1f}× below the recent median {middle:.4g}" if value > 0 else \
            f"fell to {value:.4g} from a recent median of {middle:.4g}"
    return None


def _enough_history(window: int) -> int:
    """The finite points of the window a median needs before a spike can be told."""
    return max(2, window // 2)


def _spike_way(value: float, middle: float, params: dict[str, Any]) -> str | None:
    """Whether ``value`` is a spike against the window's median ``middle``: "up", "down" or
    None (never around a median at or below zero: ratios mean nothing for signed metrics)."""
    if middle <= 0:
        return None
    direction, ratio = params["direction"], params["ratio"]
    if direction in ("up", "both") and value > ratio * middle and value > params["floor"]:
        return "up"
    if direction in ("down", "both") and value * ratio < middle:
        return "down"
    return None


def jump(values: array[float], i: int, params: dict[str, Any]) -> str | None:
    """Changed by more than ``delta`` since the previous point, and by more than ``noise`` ×
    the metric's usual step-to-step change (when set)."""
    if i < 1:
        return None
    change = values[i] - values[i - 1]
    if not abs(change) > params["delta"]:  # also true for nan
        return None
    beyond = ""
    if params["noise"] > 0:
        usual = _usual_change(values, i - 1, params["window"])
        if usual is None or not abs(change) > params["noise"] * usual:
            return None  # too early to know the noise, or within it
        beyond = f", {abs(change) / usual:.1f}× its usual step-to-step change" if usual else ""
    return f"changed by {change:+.4g} in one step (from {values[i - 1]:.4g}{beyond})"


def band_suspects(values: array[float], start: int, end: int, params: dict[str, Any]) -> Iterator[int]:
    """Points below ``low`` or above ``high`` (±inf too: ``band`` leaves those to nonfinite)."""
    low = -math.inf if params["low"] is None else params["low"]
    high = math.inf if params["high"] is None else params["high"]
    return (i for i, value in enumerate(values[start:end], start) if value < low or value > high)


def nonfinite_suspects(values: array[float], start: int, end: int,
                       params: dict[str, Any]) -> Iterator[int]:
    """Points that are not finite numbers."""
    return (i for i, value in enumerate(values[start:end], start) if not math.isfinite(value))


def decline_suspects(values: array[float], start: int, end: int,
                     params: dict[str, Any]) -> Iterator[int]:
    """Points that moved in the rule's direction by more than ``min_change`` (the last of
    the ``steps`` moves ``decline`` needs in a row)."""
    first = max(start, params["steps"], 1)
    sign, threshold = (-1.0 if params["direction"] == "down" else 1.0), params["min_change"]
    pairs = zip(values[first - 1:end - 1], values[first:end])
    return (i for i, (before, value) in enumerate(pairs, first) if (value - before) * sign > threshold)


def stuck_suspects(values: array[float], start: int, end: int, params: dict[str, Any]) -> Iterator[int]:
    """Points equal to the one before (any point when ``steps`` is 1), at zero with
    ``zero_only``."""
    first = max(start, params["steps"] - 1)
    if params["steps"] <= 1:
        candidates: Iterator[int] = iter(range(first, end))
    else:
        first = max(first, 1)
        pairs = zip(values[first - 1:end - 1], values[first:end])
        candidates = (i for i, (before, value) in enumerate(pairs, first) if value == before)
    if params["zero_only"]:
        return (i for i in candidates if values[i] == 0)
    return candidates


def spike_suspects(values: array[float], start: int, end: int, params: dict[str, Any]) -> Iterator[int]:
    """The points where ``spike`` holds: ``_spike_way`` on a window kept sorted as
    it slides (not sorted anew at each point), then ``sustain`` such points in a row."""
    window, sustain = params["window"], params["sustain"]
    first = max(0, start - sustain + 1)
    history = sorted(v for v in values[max(0, first - window):first] if math.isfinite(v))
    enough = _enough_history(window)
    in_a_row = 0
    for i in range(first, end):
        value = values[i]
        hit = False
        if len(history) >= enough and math.isfinite(value):
            size = len(history)
            middle = history[size // 2] if size % 2 else (history[size // 2 - 1] + history[size // 2]) / 2
            hit = _spike_way(value, middle, params) is not None
        in_a_row = in_a_row + 1 if hit else 0
        if in_a_row >= sustain and i >= start:
            yield i
        if math.isfinite(value):
            insort(history, value)
        if i - window >= 0 and math.isfinite(leaving := values[i - window]):
            del history[bisect_left(history, leaving)]


def jump_suspects(values: array[float], start: int, end: int, params: dict[str, Any]) -> Iterator[int]:
    """Points more than ``delta`` away from the one before."""
    first, delta = max(start, 1), params["delta"]
    pairs = zip(values[first - 1:end - 1], values[first:end])
    return (i for i, (before, value) in enumerate(pairs, first) if abs(value - before) > delta)


POINT_CHECKS: dict[str, PointCheck] = {
    "band": band, "nonfinite": nonfinite, "decline": decline, "stuck": stuck,
    "spike": spike, "jump": jump,
}
SUSPECTS: dict[str, Suspects] = {
    "band": band_suspects, "nonfinite": nonfinite_suspects, "decline": decline_suspects,
    "stuck": stuck_suspects, "spike": spike_suspects, "jump": jump_suspects,
}
