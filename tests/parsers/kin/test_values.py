"""Kin value spellings on top of verl's."""

import math

import pytest

from tui.parsers.kin.values import kin_value, number_with_unit


@pytest.mark.parametrize("text, value", [
    ("'0.3713'", 0.3713), ('"-0.007415"', -0.007415), ("'4.996e+04'", 49960.0), ("'5'", 5.0),
    (".nan", math.nan), (".inf", math.inf), ("-.inf", -math.inf), ("NaN", math.nan),
    ("-Infinity", -math.inf), ("1.0e-06", 1e-06), ("np.float64(0.25)", 0.25),
    ("tensor(0.5, device='cuda:0')", 0.5), ("-0.0", -0.0), ("True", 1.0),
])
def test_numbers_in_every_spelling(text, value):
    got = kin_value(text)
    assert (math.isnan(got) and math.isnan(value)) or got == value


@pytest.mark.parametrize("text", ["'0.13%'", "'18h 37m 22s'", "'5/3766'", "'grpo'", "None", "", "'"])
def test_words_are_not_numbers(text):
    assert kin_value(text) is None


def test_units():
    assert number_with_unit("45.23s", "s") == 45.23
    assert number_with_unit("45.23", "s") is None
