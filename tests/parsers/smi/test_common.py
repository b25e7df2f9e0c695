"""One way of reading a value for every smi grammar: placeholders are unknown, not zero."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.parsers.smi.common import cells, integer, is_rule, is_unknown, number


@pytest.mark.parametrize("text", ["[N/A]", "N/A", "NA", "-", "", "  ", "[Not Supported]",
                                  "[Requested functionality has been deprecated]", "[Unknown Error]",
                                  "[GPU is lost]", "[Insufficient Permissions]", "na"])
def test_placeholders_are_unknown_not_zero(text):
    assert is_unknown(text)
    assert number(text) is None


@pytest.mark.parametrize(("text", "value"), [("432W", 432.0), ("31859 MiB", 31859.0), (" 7 %", 7.0),
                                             ("52C", 52.0), ("79 °C", 79.0), ("0", 0.0), ("98.2", 98.2),
                                             ("-8 C", -8.0), ("1980 MHz", 1980.0)])
def test_numbers_with_units(text, value):
    assert number(text) == value


@pytest.mark.parametrize("text", ["Default", "P0", "0x233010DE", "1.2.3", "nan", "inf", "12 34"])
def test_words_and_non_finite_are_not_numbers(text):
    assert number(text) is None


def test_integer_refuses_fractions():
    assert integer("32768") == 32768
    assert integer("2.5") is None
    assert integer(None) is None


def test_cells_and_rules():
    assert cells("| 0     910B3  | OK   | 98.2  41 |") == ["0     910B3", "OK", "98.2  41"]
    assert is_rule("+===========================+===============+")
    assert is_rule("|=====|")
    assert not is_rule("| 0 | OK |")


@given(st.text())
def test_number_never_raises_and_is_finite_or_none(text):
    value = number(text)
    assert value is None or math.isfinite(value)
