"""TensorBoard's smoothing: an exponential moving average, debiased at the start.

A noisy reward curve hides the trend that tells two runs apart; TensorBoard's
slider is what RL users know, so its formula is kept exactly (its
``resmoothDataset``): a plain EMA started at zero would drag the first points
toward zero, and dividing by ``1 - weight ** n`` removes that bias. A series
that is constant, and every non-finite point, is left as it is (a nan stays
visible where it happened), and a non-finite point does not enter the average.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# The slider's range: 0 draws the raw values; 0.99 averages over roughly the last hundred points.
MAX_WEIGHT = 0.99


def clamp_weight(weight: float) -> float:
    """``weight`` held to [0, MAX_WEIGHT] (a nan means no smoothing)."""
    if not weight > 0:
        return 0.0
    return min(weight, MAX_WEIGHT)


def smooth(values: Sequence[float], weight: float) -> list[float]:
    """``values`` smoothed with TensorBoard's debiased EMA of ``weight`` (0 to 0.99)."""
    weight = clamp_weight(weight)
    if weight == 0 or not values:
        return list(values)
    first = values[0]
    if all(value == first for value in values):
        return list(values)
    smoothed = []
    last, count = 0.0, 0
    for value in values:
        if not math.isfinite(value):
            smoothed.append(value)
            continue
        last = last * weight + (1 - weight) * value
        count += 1
        smoothed.append(last / (1 - weight ** count))
    return smoothed
