"""The line chart a panel with room draws: where its dots go, what its axes say, no spike lost."""

from __future__ import annotations

from tui.model.series import Series
from tui.ui.widgets.line_chart import AXIS, BRAILLE_BASE, LineChart, dot_rows, plot_of, raster, step_axis


def series_of(values: list[float], first_step: int = 1) -> Series:
    series = Series()
    for step, value in enumerate(values, first_step):
        series.set(step, value)
    return series


def plain(row: list[tuple[str, int]]) -> str:
    return "".join(text for text, _ in row)


def cells(row: str) -> str:
    """The plot part of a drawn row: what follows the value axis."""
    return row.split("┤", 1)[-1].split("│", 1)[-1]


def test_values_map_onto_dot_rows_top_down_and_a_flat_series_sits_in_the_middle():
    assert dot_rows([0.0, 3 / 7, 1.0], 0.0, 1.0, 8) == [7, 4, 0]
    assert dot_rows([3.0, 3.0], 3.0, 3.0, 8) == [4, 4]


def test_the_line_is_connected_column_to_column():
    """A jump from the bottom to the top is a vertical run of dots, not two lone dots."""
    runs = raster([7, 0], 4)
    assert [x for x, _, _ in runs] == [0, 1, 2, 3]
    # Each column reaches from the previous one's row to its own: every row between is drawn.
    assert {y for _, top, bottom in runs for y in range(top, bottom + 1)} == set(range(8))
    assert runs[0] == (0, 7, 7) and runs[-1][2] >= runs[-2][1]
    assert raster([], 4) == [] and raster([3], 4) == [(3, 3, 3)]  # one point: at the newest column


def test_the_step_axis_names_the_first_middle_and_last_step_where_they_fit():
    axis = step_axis(1, 39, 78, 40)
    assert len(axis) == 40 and axis.startswith("1─") and axis.endswith("─78") and axis[19:21] == "39"
    assert step_axis(1, 39, 78, 6) == "1───78"  # no room for the middle one
    assert step_axis(5, 5, 5, 6) == "5─────"


def test_the_middle_label_is_the_step_of_the_middle_point():
    """A run resumed after a gap: steps 1–10, then 91–100; the middle column shows step 10's point."""
    series = Series()
    for step in [*range(1, 11), *range(91, 101)]:
        series.set(step, float(step))
    plot = plot_of([series])
    assert plot is not None and (plot.first_step, plot.middle_step, plot.last_step) == (1, 10, 100)


def test_a_one_step_spike_in_100k_flat_steps_reaches_the_top_row():
    values = [0.5] * 100_000
    values[61_234] = 2.0
    plot = plot_of([series_of(values)])
    assert plot is not None and (plot.low, plot.high) == (0.5, 2.0)
    rows = [plain(row) for row in LineChart._layout(plot, 40, 10)]
    assert len(rows) == 10  # nine plot rows and the step axis
    assert rows[0].startswith("   2┤") and rows[4].startswith("1.25┤") and rows[8].startswith(" 0.5┤")
    assert rows[-1].strip().startswith("└1─") and rows[-1].endswith("100000")
    top = cells(rows[0])
    assert sum(char != " " for char in top) == 1  # the spike, in one column…
    spike_column = next(at for at, char in enumerate(top) if char != " ")
    assert abs(spike_column - 0.61 * len(top)) <= 2  # …where it happened
    bottom = cells(rows[8])
    assert all(chr(BRAILLE_BASE) <= char <= chr(BRAILLE_BASE + 0xFF) for char in bottom)  # flat: a line


def test_two_series_share_the_value_axis_each_in_its_own_colour():
    plot = plot_of([series_of([0.2, 0.25, 0.3]), series_of([0.8, 0.85, 0.9])])
    assert plot is not None and (plot.low, plot.high) == (0.2, 0.9)
    rows = LineChart._layout(plot, 30, 8)
    colours = {colour for row in rows for text, colour in row if text.strip()}
    assert colours == {AXIS, 0, 1}  # the axis, the first line and the second
    assert plot_of([Series()]) is None  # nothing finite: nothing to draw
