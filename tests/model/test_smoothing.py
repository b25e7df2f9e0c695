"""TensorBoard's smoothing: a debiased exponential moving average."""

from __future__ import annotations

import math

import pytest

from tests.support import model_of
from tui.model.aliases import TRAIN_REWARD
from tui.model.smoothing import MAX_WEIGHT, clamp_weight, smooth


def test_each_point_is_the_debiased_average_of_those_before_it():
    # last = last·w + (1−w)·v, shown as last / (1 − wⁿ): with w = 0.5,
    # 0.5/0.5 = 1, 1.25/0.75 = 5/3, 2.125/0.875 = 17/7.
    assert smooth([1.0, 2.0, 3.0], 0.5) == pytest.approx([1.0, 5 / 3, 17 / 7])


def test_the_first_point_is_not_dragged_toward_zero():
    assert smooth([0.8, 0.8001, 0.7999], 0.99)[0] == pytest.approx(0.8)


def test_weight_zero_is_the_raw_curve_and_a_constant_curve_stays_put():
    values = [0.1, 0.5, 0.2]
    assert smooth(values, 0.0) == values
    assert smooth([0.3] * 5, 0.9) == [0.3] * 5
    assert smooth([], 0.6) == []


def test_a_nan_stays_where_it_was_and_does_not_poison_the_rest():
    smoothed = smooth([1.0, math.nan, 3.0, math.inf], 0.5)
    assert smoothed[0] == 1.0 and math.isnan(smoothed[1]) and smoothed[3] == math.inf
    assert smoothed[2] == pytest.approx(smooth([1.0, 3.0], 0.5)[1])


def test_the_weight_is_held_to_the_sliders_range():
    assert clamp_weight(1.5) == MAX_WEIGHT == 0.99
    assert clamp_weight(-0.2) == 0.0 and clamp_weight(math.nan) == 0.0
    assert smooth([0.0, 1.0], 7.0) == smooth([0.0, 1.0], MAX_WEIGHT)


def test_a_real_reward_curve_keeps_its_trend_and_loses_its_noise():
    """Corpus run 032's train reward over 1,120 steps at the slider's default, 0.6."""
    values = list(model_of("032").series_for(TRAIN_REWARD)[0].values)
    smoothed = smooth(values, 0.6)

    def wiggle(curve: list[float]) -> float:
        return sum(abs(b - a) for a, b in zip(curve, curve[1:]))

    assert len(smoothed) == len(values) > 1000
    assert wiggle(smoothed) < 0.5 * wiggle(values)
    # The trend: the last hundred points average what the raw ones do (an EMA lags a little).
    tail = slice(-100, None)
    assert sum(smoothed[tail]) / 100 == pytest.approx(sum(values[tail]) / 100, abs=0.01)
