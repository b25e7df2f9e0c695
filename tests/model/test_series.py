"""A metric's series: ordered appends, later-line-wins, spike-keeping downsampling."""

import math
from functools import reduce
from operator import add

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.model.series import BLOCK, Series


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


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e9, 1e9) | st.floats(-1e-3, 1e-3) | st.sampled_from([math.nan, math.inf, -0.0]),
                min_size=BLOCK * 4, max_size=BLOCK * 12),
       st.lists(st.booleans(), min_size=BLOCK * 12, max_size=BLOCK * 12))
def test_the_summaries_do_not_depend_on_when_the_series_is_read(values, read_after):
    """A series read between appends (a panel, a rule) and one read only at the end
    have the same range, in-order sum and drawing, as the points themselves give."""
    read_often, read_once = Series(), Series()
    for step, value in enumerate(values):
        read_often.set(step, value)
        read_once.set(step, value)
        if read_after[step]:
            read_often.finite_range()
    finite = [v for v in values if math.isfinite(v)]
    assert read_often.finite_range() == read_once.finite_range() == \
        ((min(finite), max(finite)) if finite else None)
    assert read_often.finite_sum() == read_once.finite_sum() == reduce(add, finite, 0.0)
    buckets = len(values) // BLOCK // 2  # drawn from the block summaries, two blocks a bucket
    assert read_often.downsample(buckets) == read_once.downsample(buckets)


def test_evenly_strided_steps_cost_no_memory_of_their_own():
    # A million-step run's 28 series held their steps as 28 arrays of 8 MB each: as much
    # again as the values. Steps 1, 2, 3, … (or every tenth, validation's) are a range.
    training, validation = Series(), Series()
    for step in range(1, 100_001):
        training.set(step, 0.5)
        if step % 10 == 0:
            validation.set(step, 0.7)
    assert training.steps == range(1, 100_001) and validation.steps == range(10, 100_001, 10)
    training.set(100_003, 0.5)  # a step skipped: the stride is broken, an array from then on
    assert not isinstance(training.steps, range)
    assert list(training.steps) == [*range(1, 100_001), 100_003]


@given(st.lists(st.integers(0, 60), max_size=40), st.lists(st.integers(0, 60), max_size=40))
@settings(max_examples=300, deadline=None)
def test_the_steps_are_the_same_whether_a_range_or_an_array(first, more):
    from tui.model.merge import Source, TaggedSeries

    series, expected = TaggedSeries(), {}
    for step in first:
        series.set(step, float(step))
        expected[step] = float(step)
    column = sorted(set(more))
    if column and not series.extend(column, [float(s) for s in column], Source.CONSOLE):
        for step in column:
            series.set(step, float(step))
    expected.update((step, float(step)) for step in column)
    assert list(series.steps) == sorted(expected)
    assert list(series.values) == [expected[s] for s in sorted(expected)]
