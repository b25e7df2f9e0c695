"""Each rule kind on small series."""

import math
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.rules.point_checks import POINT_CHECKS, SUSPECTS, band, decline, jump, nonfinite, spike, stuck


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
    params = {"steps": 3, "direction": "down", "min_change": 0.0, "noise": 0.0, "window": 20}
    assert hits(decline, series(5, 4, 3, 2, 2, 1), params) == [3]
    rising = {"steps": 2, "direction": "up", "min_change": 0.0, "noise": 0.0, "window": 20}
    assert hits(decline, series(1, 2, 3, 3), rising) == [2]
    one_drop = {"steps": 1, "direction": "down", "min_change": 0.05, "noise": 0.0, "window": 20}
    assert hits(decline, series(0.7, 0.5, 0.48, 0.6), one_drop) == [1]


def test_a_decline_inside_the_metrics_own_noise_is_not_one():
    """032's reward at steps 1071–1073: 0.978 → 0.972 → 0.969 → 0.963, three falls of under
    0.01 in a reward that moves about 0.01 a step: noise, not a reward falling."""
    noisy = {"steps": 3, "direction": "down", "min_change": 0.0, "noise": 2.0, "window": 10}
    history = [0.97, 0.98, 0.965, 0.975, 0.985, 0.97, 0.98, 0.965, 0.975, 0.98]
    assert hits(decline, series(*history, 0.978, 0.972, 0.969, 0.963), noisy) == []
    # The same three falls, each ten times larger, are beyond the noise.
    assert hits(decline, series(*history, 0.978, 0.92, 0.87, 0.8), noisy) == [12, 13]
    # Without enough history to know the noise, nothing is said.
    assert hits(decline, series(0.978, 0.92, 0.87, 0.8), noisy) == []


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
    params = {"delta": 0.5, "noise": 0.0, "window": 20}
    assert hits(jump, series(-0.1, 0.5, 0.45, math.nan, 0.4), params) == [1]


def test_a_jump_inside_the_metrics_own_swings_is_not_one():
    """A loss that swings by 0.4–0.8 every step has not jumped when it moves by 0.6; one
    that moves by 0.01 a step has."""
    noisy = {"delta": 0.5, "noise": 3.0, "window": 10}
    swinging = [0.0, 0.6, -0.1, 0.5, -0.3, 0.4, -0.2, 0.6, 0.0, 0.7, 0.1]
    assert hits(jump, series(*swinging, 0.7), noisy) == []
    calm = [0.0, 0.01, 0.0, 0.02, 0.01, 0.0, 0.01, 0.02, 0.01, 0.0, 0.01]
    assert hits(jump, series(*calm, 0.61), noisy) == [11]


# Each check's suspects pass: a superset of its hits on any series, from any starting point.
_VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=32),
                    st.sampled_from([0.0, -0.0, 1.0, 2.0, 0.5]))  # repeats: stuck, medians
_PARAMS = {
    "band": st.fixed_dictionaries({"low": st.one_of(st.none(), st.floats(-2, 2)),
                                   "high": st.one_of(st.none(), st.floats(-2, 2))}),
    "nonfinite": st.just({}),
    "decline": st.fixed_dictionaries({"steps": st.integers(1, 4),
                                      "direction": st.sampled_from(["down", "up"]),
                                      "min_change": st.floats(0, 1),
                                      "noise": st.sampled_from([0.0, 2.0]),
                                      "window": st.integers(1, 8)}),
    "stuck": st.fixed_dictionaries({"steps": st.integers(1, 5), "zero_only": st.booleans(),
                                    "companions": st.just([])}),
    "spike": st.fixed_dictionaries({"window": st.integers(1, 8), "ratio": st.floats(1, 4),
                                    "direction": st.sampled_from(["up", "down", "both"]),
                                    "floor": st.floats(0, 1), "sustain": st.integers(1, 3)}),
    "jump": st.fixed_dictionaries({"delta": st.floats(0, 2), "noise": st.sampled_from([0.0, 3.0]),
                                   "window": st.integers(1, 8)}),
}


@pytest.mark.parametrize("kind", sorted(POINT_CHECKS))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_suspects_pass_never_misses_a_point_its_check_would_flag(kind, data):
    values = array("d", data.draw(st.lists(_VALUES, max_size=40)))
    params = data.draw(_PARAMS[kind])
    start = data.draw(st.integers(0, len(values)))
    end = data.draw(st.integers(start, len(values)))
    suspects = list(SUSPECTS[kind](values, start, end, params))
    assert suspects == sorted(set(suspects)) and all(start <= i < end for i in suspects)
    flagged = [i for i in range(start, end) if POINT_CHECKS[kind](values, i, params) is not None]
    assert set(flagged) <= set(suspects), (flagged, suspects)


def test_spike_suspects_are_exactly_its_hits_on_a_long_noisy_series():
    # The sliding sorted window must give the same medians as sorting each window anew.
    values = series(*[1.0 + 0.3 * math.sin(i * 1.7) + (4.0 if i % 37 in (0, 1) else 0.0)
                      for i in range(400)], math.nan, 9.0, 9.0)
    params = {"window": 20, "ratio": 2.0, "direction": "both", "floor": 0.0, "sustain": 2}
    assert list(SUSPECTS["spike"](values, 0, len(values), params)) == hits(spike, values, params)
    assert list(SUSPECTS["spike"](values, 150, 300, params)) == [
        i for i in hits(spike, values, params) if 150 <= i < 300]
