"""Durations in words: seconds while short, never "0 min", hours with their minutes."""

from __future__ import annotations

import math

import pytest

from tui.durations import word_duration


@pytest.mark.parametrize("seconds, words", [
    (0, "0 s"), (0.9, "under 1 s"), (0.004, "under 1 s"), (45, "45 s"), (59.99, "59 s"),
    (60, "1 min"), (13 * 60 + 40, "13 min"), (3599, "59 min"),
    (3600, "1 h 00 min"), (2 * 3600 + 5 * 60 + 59, "2 h 05 min"), (86399, "23 h 59 min"),
    (86400, "1 d 0 h"), (3 * 86400 + 4 * 3600 + 59 * 60, "3 d 4 h"), (400 * 86400, "400 d 0 h"),
])
def test_word_duration(seconds, words):
    assert word_duration(seconds) == words


@pytest.mark.parametrize("seconds", [-1.0, math.nan, math.inf, -math.inf])
def test_a_duration_no_clock_could_measure_is_a_question_mark(seconds):
    assert word_duration(seconds) == "?"
