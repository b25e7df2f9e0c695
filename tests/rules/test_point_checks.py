"""Each rule kind on small series."""

import math
from array import array

from tui.rules.point_checks import band, decline, jump, nonfinite, spike, stuck


def series(*values: float) -> array:
    return array("d", values)


def hits(check, values, params) -> list[int]:
    return [i for i in range(len(values)) if check(values, i, params) is not None]


def test_band_flags_outside_low_and_high_and_leaves_nan_to_nonfinite():
    values = series(0.1, 0.04, 0.31, 0.2, math.nan)
    assert hits(band, values, {"low": 0.05, "high": 0.30}) == [1, 2]
    assert band(values, 2, {"low": None, "high": 0.3}) == "above 0.3"


def test_nonfinite():
    assert hits(nonfinite, series(1, math.nan, math.inf, -math.inf, 0), {}) == [1, 2, 3]


def test_decline_needs_consecutive_moves_larger_than_the_minimum():
    params = {"steps": 3, "direction": "down", "min_change": 0.0}
    assert hits(decline, series(5, 4, 3, 2, 2, 1), params) == [3]
    rising = {"steps": 2, "direction": "up", "min_change": 0.0}
    assert hits(decline, series(1, 2, 3, 3), rising) == [2]
    one_drop = {"steps": 1, "direction": "down", "min_change": 0.05}
    assert hits(decline, series(0.7, 0.5, 0.48, 0.6), one_drop) == [1]


def test_stuck_constant_and_stuck_at_zero():
    params = {"steps": 3, "zero_only": False, "companions": []}
    assert hits(stuck, series(1, 2, 2, 2, 2, 3), params) == [3, 4]
    zero = {"steps": 2, "zero_only": True, "companions": []}
    assert hits(stuck, series(0.5, 0.5, 0, 0), zero) == [3]


def test_spike_against_the_recent_median_in_each_direction():
    base = [1.0] * 10
    up = {"window": 10, "ratio": 3.0, "direction": "up", "floor": 0.0, "sustain": 1}
    assert hits(spike, series(*base, 3.5, 1.0), up) == [10]
    down = dict(up, direction="down")
    assert hits(spike, series(*base, 0.2, 1.0), down) == [10]
    both = dict(up, direction="both")
    assert hits(spike, series(*base, 0.2, 4.0), both) == [10, 11]


def test_spike_floor_and_sustain():
    floor = {"window": 10, "ratio": 3.0, "direction": "up", "floor": 1.0, "sustain": 1}
    assert hits(spike, series(*[0.1] * 10, 0.5), floor) == []  # 5× but under the floor
    sustained = dict(floor, floor=0.0, sustain=2)
    values = series(*[1.0] * 10, 5.0, 1.0, *[1.0] * 8, 5.0, 5.0)
    assert hits(spike, values, sustained) == [21]  # the lone blip at 10 is not enough


def test_spike_needs_history_and_a_positive_median():
    params = {"window": 10, "ratio": 3.0, "direction": "up", "floor": 0.0, "sustain": 1}
    assert hits(spike, series(1, 1, 9), params) == []
    assert hits(spike, series(*[-1.0] * 10, 5.0), params) == []


def test_jump_between_consecutive_steps():
    assert hits(jump, series(-0.1, 0.5, 0.45, math.nan, 0.4), {"delta": 0.5}) == [1]
