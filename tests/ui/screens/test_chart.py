"""The chart's envelope: a long series shrunk to its columns keeps every spike. The chart
opens at once, saying its figure is being drawn, and the figure follows."""

from __future__ import annotations

import math
from array import array
from pathlib import Path

from tests.support import text_of, wait_for
from tests.ui.test_one_frame import SIZE, counting_app
from tui.ui.screens.chart import ChartScreen, envelope, step_ticks
from tui.ui.widgets.chart_plot import PLACEHOLDER, ChartPlot


def test_a_one_step_spike_survives_shrinking_100k_points_to_50_columns():
    steps = array("q", range(1, 100_001))
    values = array("d", [0.5] * 100_000)
    values[31_337], values[77_000] = 9.0, -4.0
    values[50_000] = math.nan
    xs, ys = envelope(steps, values, 50)
    assert len(xs) <= 100 and xs == sorted(xs)
    assert (31_338, 9.0) in zip(xs, ys) and (77_001, -4.0) in zip(xs, ys)
    assert all(math.isfinite(y) for y in ys)


def test_a_short_series_is_drawn_whole_without_its_non_finite_points():
    xs, ys = envelope(array("q", [1, 2, 3, 4]), array("d", [1.0, math.inf, 3.0, 4.0]), 50)
    assert (xs, ys) == ([1, 3, 4], [1.0, 3.0, 4.0])


async def test_the_chart_opens_with_a_placeholder_and_its_figure_follows(tmp_path: Path):
    """plotext builds a wide figure in a quarter of a second of pure Python: the screen
    comes first, its figure in the frame after."""
    app = counting_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 20, "20 steps")
        await pilot.pause(0.3)

        def look() -> str:
            screen = app.screen
            return text_of(screen.query_one(ChartPlot)) if isinstance(screen, ChartScreen) else ""

        app.look, app.seen = look, []
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the chart")
        plot = app.screen.query_one(ChartPlot)
        await wait_for(pilot, lambda: plot.cursor_cell() is not None, "the figure")
        first = next(seen for seen in app.seen if seen)
        assert first.startswith(PLACEHOLDER) and "┤" not in first
        assert "┤" in text_of(plot) and PLACEHOLDER not in text_of(plot)


async def test_quitting_before_the_figure_is_drawn_is_clean(tmp_path: Path):
    app = counting_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 20, "20 steps")
        await pilot.press("c", "q")
    assert app.return_code == 0


def test_step_ticks_are_whole_steps_at_a_round_interval():
    assert step_ticks(1, 40) == [1, 10, 20, 30, 40]
    assert step_ticks(0, 105) == [0, 50, 105] and step_ticks(3, 3) == [3]  # the ends are the run's
    assert all(isinstance(tick, int) for tick in step_ticks(1, 1120))


async def test_the_legend_is_a_row_beside_the_plot_ticks_are_steps_and_the_frame_is_single(tmp_path: Path):
    app = counting_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 20, "20 steps", timeout=15)
        # c charts the metric its panel shows: a panel not yet drawn has none (a growing log's
        # steps are drawn at most twice a second), and the key only says so.
        await wait_for(pilot, lambda: app.up_to_date, "the steps drawn", timeout=15)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the chart", timeout=15)
        plot = app.screen.query_one(ChartPlot)
        await wait_for(pilot, lambda: plot.cursor_cell() is not None, "the figure", timeout=15)
        legend = text_of(app.screen.query_one("#chart-legend"))
        assert legend.strip().startswith("⣿ " + app.screen.key)
        drawn = [plot.render_line(y).text for y in range(plot.size.height)]
        assert not any(app.screen.key in line for line in drawn)  # not drawn over the curve
        ticks = next(line for line in drawn if line.strip() and line.strip()[0].isdigit()
                     and "┤" not in line and "│" not in line)
        assert ticks.split() == [str(t) for t in step_ticks(1, 20)]
        assert not any("││" in line or "┬┐" in line for line in drawn)  # the cursor on the newest
