"""The step-time median kept as the series grows: always what statistics.median says."""

import math
import statistics
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.model.running_median import RunningMedian
from tui.model.series import Series

VALUES = st.one_of(st.floats(-5, 100), st.just(math.nan), st.just(math.inf), st.just(0.0))


def expected(series: Series) -> float | None:
    kept = [v for v in series.values if math.isfinite(v) and v > 0]
    return statistics.median(kept) if kept else None


@given(st.lists(st.tuples(st.integers(1, 400), VALUES, st.booleans()), max_size=80))
@settings(max_examples=300, deadline=None)
def test_the_median_is_the_one_of_all_the_values_read_now(points):
    series, median = Series(), None
    for step, value, read in points:
        series.set(step, value)  # mostly new last steps; some re-printed or inserted
        if read:
            median = median or RunningMedian(series)
            assert median.median() == expected(series)
    assert RunningMedian(series).median() == expected(series)


def test_a_new_step_of_a_million_step_run_costs_no_sort():
    series = Series()
    for step in range(1, 1_000_001):
        series.set(step, 60.0 + step % 7)
    median = RunningMedian(series)
    assert median.median() == 63.0
    started = time.process_time()
    for step in range(1_000_001, 1_000_101):
        series.set(step, 1000.0)
        median.median()
    # A hundred medians afresh would sort a million values each (tens of seconds).
    assert time.process_time() - started < 2.0
    assert median.median() == 63.0
