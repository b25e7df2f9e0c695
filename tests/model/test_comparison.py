"""Runs' numbers side by side: last, best (where a metric has a better direction), mean."""

from __future__ import annotations

import math

import pytest

from tests.support import model_of
from tui.model.aliases import ENTROPY, STEP_TIME, TRAIN_REWARD, VALIDATION
from tui.model.comparison import RunNumbers, best_run, run_numbers
from tui.model.series import Series


def series(*values: float) -> Series:
    out = Series()
    for step, value in enumerate(values):
        out.set(step, value)
    return out


def test_reward_is_best_highest_and_step_time_lowest():
    assert run_numbers(series(0.2, 0.6, 0.5), TRAIN_REWARD) == RunNumbers(0.5, 0.6, pytest.approx(13 / 30), 3)
    assert run_numbers(series(40.0, 31.5, 35.0), STEP_TIME).best == 31.5


def test_a_metric_without_a_better_direction_has_no_best():
    numbers = run_numbers(series(0.4, 0.3, 0.35), ENTROPY)
    assert numbers.best is None and numbers.last == 0.35


def test_the_numbers_follow_a_series_that_grows_and_is_rewritten():
    growing = series(0.2, 0.4)
    assert run_numbers(growing, TRAIN_REWARD).mean == pytest.approx(0.3)
    growing.set(2, 0.9)
    assert run_numbers(growing, TRAIN_REWARD) == RunNumbers(0.9, 0.9, pytest.approx(0.5), 3)
    growing.set(1, 0.1)  # a step printed again (a resumed run): the later value wins
    assert run_numbers(growing, TRAIN_REWARD).mean == pytest.approx(0.4)


def test_nan_points_are_counted_but_not_averaged():
    numbers = run_numbers(series(0.5, math.nan, 0.7, math.nan), VALIDATION)
    assert numbers == RunNumbers(0.7, 0.7, pytest.approx(0.6), 4)
    assert run_numbers(series(math.nan), VALIDATION) == RunNumbers(None, None, None, 1)


def test_the_best_run_of_two_real_runs():
    """Corpus 032 (GRPO) and 033 (PPO) of one recipe: which reached the higher reward."""
    grpo, ppo = (run_numbers(model_of(prefix).series_for(TRAIN_REWARD)[0], TRAIN_REWARD)
                 for prefix in ("032", "033"))
    assert (grpo.last, grpo.best, grpo.points) == (0.981, 0.991, 1119)
    assert (ppo.last, ppo.best, ppo.points) == (0.951, 0.971, 1119)
    assert best_run([ppo, None, grpo], TRAIN_REWARD) == 2
    assert best_run([grpo], TRAIN_REWARD) is None  # one run beats nobody
    assert best_run([grpo, ppo], ENTROPY) is None
