"""Numbers as the panels print them: short, signed where it is a change, never a crash."""

from __future__ import annotations

import pytest

from tui.ui.format import format_delta, format_duration, format_number


@pytest.mark.parametrize(("value", "text"), [
    (0.981, "0.981"), (134.196, "134.2"), (-0.0561, "-0.0561"), (1.2e-05, "1.2e-05"),
    (176548.125, "176.5k"), (-25000.0, "-25k"), (3.2e9, "3.2G"), (0.0, "0"),
    (float("nan"), "nan"), (float("inf"), "inf"), (float("-inf"), "-inf"),
])
def test_format_number(value, text):
    assert format_number(value) == text


@pytest.mark.parametrize(("value", "width", "text"), [
    (-0.01834, 7, "-0.0183"), (0.981, 7, "0.981"), (-1.234e-05, 7, "-1e-05"),
    (-1.234e-05, 8, "-1.2e-05"), (-176548.125, 6, "-177k"), (float("-inf"), 3, "-inf"),
])
def test_format_number_fits_a_width_with_fewer_digits(value, width, text):
    assert format_number(value, width) == text


@pytest.mark.parametrize(("delta", "text"), [
    (0.012, "+0.012"), (-2.75, "-2.75"), (0.0, "±0"), (float("nan"), "nan"), (15000.0, "+15k"),
])
def test_format_delta(delta, text):
    assert format_delta(delta) == text


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (42.9, "42s"), (245, "4m05s"), (11520, "3h12m"), (187200, "2d04h"),
    (-1, "?"), (float("nan"), "?"),
])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text
