"""A plotext chart drawn once, with a step cursor moved over it without drawing it again.

plotext builds a whole figure per call, in pure Python: on a 160-column chart
that is a quarter of a second, too slow for every ←/→ of the chart's cursor.
The figure without the cursor is built when its data or size change and kept
as lines; the cursor (a vertical line on the step, a ◆ on its value) is laid
over those lines where plotext would have drawn it, from the figure's own
axis limits and canvas area, so a cursor move redraws one column.
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual_plotext import PlotextPlot

# plotext's own frame glyphs where a vertical line meets the frame.
_TOP = {"─": "┬"}
_BOTTOM = {"─": "┴", "┬": "┴"}
LINE = "│"
MARK = "◆"
# What a chart shows while its figure is built just after the screen opened.
PLACEHOLDER = " drawing the chart…"


def canvas_cell(value: float, low: float, high: float, cells: int) -> int:
    """The cell of ``value`` on an axis from ``low`` to ``high`` over ``cells`` cells,
    rounded as plotext rounds a data point (``_utility.get_matrix_data``)."""
    if high == low or cells <= 0:
        return 0
    return int(round(0.5 + (cells - 1) * (value - low) / (high - low), 8) // 1)


class ChartPlot(PlotextPlot):
    """A PlotextPlot whose figure is built on ``draw()`` only; ``show_cursor`` moves the cursor."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # The figure's lines as last built, and what they were built for (size, themes).
        self._base: list[Strip] | None = None
        self._built_for: tuple[Size, str, str] | None = None
        # Where the canvas is: its columns, its rows (counted from the bottom), the x and y
        # limits of the figure as built.
        self._canvas: tuple[range, range, tuple[float, float], tuple[float, float]] | None = None
        # (step, value or None, line colour, mark colour): None draws no cursor.
        self._cursor: tuple[float, float | None, Style, Style] | None = None
        # The next frame shows PLACEHOLDER; the figure is built for the one after.
        self._after_frame = False

    def draw(self, *, after_frame: bool = False) -> None:
        """The figure's data changed (set through ``plt``): build it again on the next frame,
        or, ``after_frame``, show PLACEHOLDER in that frame and build it for the next one: a
        chart being opened shows its screen at once and its figure a quarter of a second
        later (plotext builds a wide figure in pure Python), not both a quarter late."""
        self._base = None
        self._after_frame = after_frame
        self.refresh()

    def _build_after_frame(self) -> None:
        self._after_frame = False
        self.refresh()

    def show_cursor(self, step: float | None, value: float | None,
                    line: tuple[int, int, int], mark: tuple[int, int, int]) -> None:
        """Put the cursor on ``step`` (its ◆ on ``value`` when finite; no cursor for None)."""
        cursor = None if step is None else (step, value, Style(color=_rgb(line)), Style(color=_rgb(mark)))
        if cursor != self._cursor:
            self._cursor = cursor
            self.refresh()

    def cursor_cell(self) -> tuple[int, int | None] | None:
        """The cursor's column and the line of its ◆ (None: no ◆), as drawn last."""
        if self._cursor is None or self._canvas is None:
            return None
        columns, rows, (x_low, x_high), (y_low, y_high) = self._canvas
        step, value, _, _ = self._cursor
        column = columns.start + canvas_cell(step, x_low, x_high, len(columns))
        if value is None or not rows or y_low is None or not (min(y_low, y_high) <= value <= max(y_low, y_high)):
            return column, None
        row = rows.start + canvas_cell(value, y_low, y_high, len(rows))
        return column, self.size.height - 1 - row

    def render_line(self, y: int) -> Strip:
        """A line of the kept figure, with the cursor's cell laid over it."""
        if self._after_frame:
            self._dirty_regions.clear()
            if y == 0:  # the frame is being drawn: the figure comes with the next one
                self.call_after_refresh(self._build_after_frame)
                return Strip([Segment(PLACEHOLDER.ljust(self.size.width), self.rich_style
                                      + Style(dim=True))])
            return Strip.blank(self.size.width, self.rich_style)
        built_for = (self.size, self.app.theme, self.theme)
        if self._base is None or built_for != self._built_for:
            self._build()
            self._built_for = built_for
        self._dirty_regions.clear()
        assert self._base is not None
        if y >= len(self._base):
            return Strip.blank(self.size.width, self.rich_style)
        return self._with_cursor(self._base[y], y)

    def _build(self) -> None:
        """Build the figure (plotext) and keep its lines and its canvas' place."""
        self._render_content()
        self._base = list(self._render_cache.lines)
        # The figure as plotext last built it (not in textual-plotext's typed surface).
        figure: Any = self.plt
        monitor = figure.monitor
        x_limits, y_limits = monitor.xlim[0], monitor.ylim[0]
        matrix = monitor.matrix
        self._canvas = ((matrix.Cols_canvas, matrix.Rows_canvas, tuple(x_limits), tuple(y_limits))
                        if None not in x_limits and None not in y_limits else None)

    def _with_cursor(self, line: Strip, y: int) -> Strip:
        cell = self.cursor_cell()
        if cell is None or self._canvas is None or self._cursor is None:
            return line
        column, mark_line = cell
        _, rows, _, _ = self._canvas
        _, _, line_style, mark_style = self._cursor
        if not 0 <= column < line.cell_length:
            return line
        top, bottom = self.size.height - 1 - rows.stop, self.size.height - rows.start
        under = line.crop(column, column + 1)
        char = under.text
        style = next((segment.style for segment in under if segment.style is not None), Style())
        if y == mark_line:
            glyph, colour = MARK, mark_style
        elif y == top:  # the frame keeps its colour where the line meets it
            glyph, colour = _TOP.get(char, char), Style()
        elif y == bottom:
            glyph, colour = _BOTTOM.get(char, char), Style()
        elif top < y < bottom and char == " ":
            glyph, colour = LINE, line_style  # the curve, drawn over the line, stays
        else:
            return line
        return Strip.join([line.crop(0, column), Strip([Segment(glyph, style + colour)]),
                           line.crop(column + 1, line.cell_length)])


def _rgb(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)
