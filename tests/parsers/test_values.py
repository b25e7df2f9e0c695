"""Metric values in every spelling verl has printed."""

import math

import pytest

from tui.parsers.values import format_value, parse_value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.000", 0.0),
        ("-0.000", -0.0),
        ("0.30000000000000004", 0.30000000000000004),
        ("-8.163164312320433e-06", -8.163164312320433e-06),
        ("1e-06", 1e-06),
        ("419336", 419336.0),
        ("np.float64(0.5)", 0.5),
        ("np.float64(-0.3851111111376021)", -0.3851111111376021),
        ("np.int32(2)", 2.0),
        ("True", 1.0),
        ("False", 0.0),
        ("  0.707  ", 0.707),
    ],
)
def test_finite_values_in_every_verl_spelling(text, expected):
    assert parse_value(text) == expected


@pytest.mark.parametrize(("text", "check"), [("nan", math.isnan), ("np.float64(nan)", math.isnan),
                                             ("inf", lambda v: v == math.inf),
                                             ("-inf", lambda v: v == -math.inf)])
def test_non_finite_values_are_kept_not_dropped(text, check):
    assert check(parse_value(text))


@pytest.mark.parametrize("text", ["", "np.float64(0.12", "np.float64", "abc", "0.1.2", "[bold]",
                                  "1_000", "0x10", "nan(1)"])  # Python's float() reads the first
def test_cut_or_garbled_values_are_unreadable(text):
    assert parse_value(text) is None


def test_json_form_spells_non_finite_values_as_strings():
    assert format_value(float("nan")) == "nan"
    assert format_value(float("inf")) == "inf"
    assert format_value(float("-inf")) == "-inf"
    assert format_value(0.25) == 0.25
