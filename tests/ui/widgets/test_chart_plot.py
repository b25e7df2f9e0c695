"""The chart's cursor is laid over the kept figure exactly where plotext draws its own
vertical line and marker, and moving it builds no figure."""

from __future__ import annotations

import math

import pytest
from rich.style import Style
from textual.app import App, ComposeResult
from textual.strip import Strip

from tests.support import count_figure_builds
from tui.ui.widgets.chart_plot import ChartPlot

LINE, MARK = (200, 100, 0), (250, 0, 50)
STEPS = list(range(1, 301))
VALUES = [math.sin(step / 17) + step / 300 for step in STEPS]


class OnePlot(App[None]):
    """A ChartPlot alone (plotext's figures share their lines, so two plots in one
    app would draw each other's cursor)."""

    def compose(self) -> ComposeResult:
        yield ChartPlot()


def figure(plot: ChartPlot) -> None:
    plot.plt.clear_data()
    plot.plt.xlabel("step")
    plot.plt.plot(STEPS, VALUES, marker="braille", color=(0, 120, 255))
    plot.plt.plot([STEPS[0], STEPS[-1]], [0.9, 0.9], color=(255, 200, 0))


def cell(line: Strip, column: int) -> list[tuple[str, Style | None]]:
    """The character and colours at ``column`` (not where the mouse would land)."""
    return [(segment.text, segment.style and segment.style.clear_meta_and_links())
            for segment in line.crop(column, column + 1)]


def lines(plot: ChartPlot) -> list[str]:
    return [plot.render_line(y).text for y in range(plot.size.height)]


@pytest.mark.parametrize("index", [0, 41, 150, 299])
async def test_the_cursor_is_where_plotexts_own_vline_and_marker_are(index):
    app = OnePlot()
    async with app.run_test(size=(90, 30)) as pilot:
        plot = app.query_one(ChartPlot)
        figure(plot)  # plotext draws the cursor itself
        plot.plt.vline(STEPS[index], LINE)
        plot.plt.scatter([STEPS[index]], [VALUES[index]], marker="◆", color=MARK)
        plot.draw()
        await pilot.pause()
        theirs = [plot.render_line(y) for y in range(plot.size.height)]

        figure(plot)  # the figure alone, the cursor laid over it
        plot.draw()
        await pilot.pause()
        assert lines(plot) != [line.text for line in theirs]
        plot.show_cursor(STEPS[index], VALUES[index], LINE, MARK)
        await pilot.pause()
        assert lines(plot) == [line.text for line in theirs]
        column, mark_line = plot.cursor_cell()
        assert mark_line is not None and plot.render_line(mark_line).text[column] == "◆"
        for y, line in enumerate(theirs):  # in plotext's colours too
            assert cell(plot.render_line(y), column) == cell(line, column)


async def test_moving_the_cursor_builds_no_figure():
    app = OnePlot()
    async with app.run_test(size=(90, 30)) as pilot:
        plot = app.query_one(ChartPlot)
        figure(plot)
        plot.draw()
        plot.show_cursor(STEPS[10], VALUES[10], LINE, MARK)
        await pilot.pause()
        builds = count_figure_builds(plot)
        before = lines(plot)
        plot.show_cursor(STEPS[200], VALUES[200], LINE, MARK)
        await pilot.pause()
        after = lines(plot)
        assert builds() == 0 and after != before
        column, _ = plot.cursor_cell()
        assert any(line[column] == "│" for line in after)

        plot.draw()  # new data: the figure is built again
        await pilot.pause()
        lines(plot)
        assert builds() == 1
