"""The chart's envelope: a long series shrunk to its columns keeps every spike."""

from __future__ import annotations

import math
from array import array

from tui.ui.screens.chart import envelope


def test_a_one_step_spike_survives_shrinking_100k_points_to_50_columns():
    steps = array("q", range(1, 100_001))
    values = array("d", [0.5] * 100_000)
    values[31_337], values[77_000] = 9.0, -4.0
    values[50_000] = math.nan
    xs, ys = envelope(steps, values, 50)
    assert len(xs) <= 100 and xs == sorted(xs)
    assert (31_338, 9.0) in zip(xs, ys) and (77_001, -4.0) in zip(xs, ys)
    assert all(math.isfinite(y) for y in ys)


def test_a_short_series_is_drawn_whole_without_its_non_finite_points():
    xs, ys = envelope(array("q", [1, 2, 3, 4]), array("d", [1.0, math.inf, 3.0, 4.0]), 50)
    assert (xs, ys) == ([1, 3, 4], [1.0, 3.0, 4.0])
