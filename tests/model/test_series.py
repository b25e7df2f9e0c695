"""A metric's series: ordered appends, later-line-wins, spike-keeping downsampling."""

import math

from tui.model.series import Series


def build(points) -> Series:
    series = Series()
    for step, value in points:
        series.set(step, value)
    return series


def test_steps_in_order_append():
    series = build([(1, 0.1), (2, 0.2), (3, 0.3)])
    assert list(series.steps) == [1, 2, 3] and series.last() == (3, 0.3)
    assert series.previous() == (2, 0.2)


def test_a_re_printed_step_replaces_its_value():
    series = build([(1, 0.1), (2, 0.2), (3, 0.3), (2, 9.0)])
    assert list(series.steps) == [1, 2, 3] and series.value_at(2) == 9.0


def test_an_out_of_order_step_is_inserted_in_place():
    series = build([(1, 0.1), (5, 0.5), (3, 0.3)])
    assert list(series.steps) == [1, 3, 5] and list(series.values) == [0.1, 0.3, 0.5]


def test_finite_range_ignores_nan():
    series = build([(1, 1.0), (2, math.nan), (3, -2.0), (4, math.inf)])
    assert series.finite_range() == (-2.0, 1.0)


def test_downsampling_keeps_a_one_step_spike_in_either_direction():
    values = [0.5] * 10_000
    values[4321] = 9.0
    values[8765] = -7.0
    series = build(enumerate(values))
    drawn = series.downsample(40)
    assert len(drawn) == 40 and max(drawn) == 9.0 and min(drawn) == -7.0


def test_short_series_are_drawn_whole():
    assert build([(1, 1.0), (2, math.nan), (3, 3.0)]).downsample(10) == [1.0, 3.0]
    assert Series().downsample(10) == []


def test_range_and_drawing_stay_right_through_rewrites():
    series = build([(s, 1.0) for s in range(1, 5001)])
    assert series.finite_range() == (1.0, 1.0)
    series.set(2500, 7.0)  # a re-printed step: history changed
    assert series.finite_range() == (1.0, 7.0) and max(series.downsample(30)) == 7.0
    series.set(2500, 1.0)
    assert series.finite_range() == (1.0, 1.0) and max(series.downsample(30)) == 1.0


def test_block_summaries_draw_the_same_extremes_as_the_points():
    import random

    rng = random.Random(3)
    values = [rng.gauss(0, 1) for _ in range(100_000)]
    values[77_777] = 40.0
    values[123] = math.nan
    series = build(enumerate(values))
    drawn = series.downsample(120)
    assert len(drawn) == 120 and max(drawn) == 40.0
    assert min(drawn) == min(v for v in values if math.isfinite(v))


def test_the_finite_sum_follows_appends_and_rewrites_without_nan():
    series = Series()
    for step, value in enumerate([1.0, float("nan"), 2.5, float("inf")]):
        series.set(step, value)
    assert series.finite_sum() == 3.5
    series.set(2, 0.5)  # a re-printed step rewrites its value
    series.set(4, 1.0)
    assert series.finite_sum() == 2.5
