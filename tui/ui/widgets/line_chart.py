"""A panel's history as a line chart: braille dots, a value axis on the left, a step axis below.

A panel with room (the 200×50 dashboard) has a dozen rows for its history;
a sparkline stretched over them is a block of solid bars whose top edge is
the only information. Here the same points are a line, four dots high and two
wide per cell, with the value at the top, middle and bottom row and the first,
middle and last step under it, so a level and a step can be read off.

The points are the series' own downsample (one value per dot column, the one
that strays furthest from the mean, so no spike is lost) spread evenly over
the width: a run logs every step, so the width is its steps, and the middle
label is the step of the middle point whatever steps are missing. The picture
is rasterised once per change of data or size: drawing the screen again only
lays the cached rows out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from tui.model.series import Series
from tui.ui.format import format_number

# The colour of each line, in order (the first is the panel's own metric).
LINE_STYLES = ("$primary", "$accent", "$success", "$secondary", "$warning")
# A braille cell's dot bits by (row, column) within the cell (Unicode's dot numbering).
_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
# The bits of a run of dots from row ``top`` to row ``bottom`` (both within one cell) of
# dot column ``dx`` of a cell: _RUN_BITS[dx][top][bottom].
_RUN_BITS = tuple(tuple(tuple(sum(_DOTS[row][dx] for row in range(top, bottom + 1))
                              for bottom in range(4)) for top in range(4)) for dx in range(2))
BRAILLE_BASE = 0x2800


@dataclass(frozen=True, slots=True)
class Plot:
    """What the chart shows: one series per line, the value range the axis spans,
    and the first and last step under it."""

    lines: tuple[Series, ...]
    low: float
    high: float
    first_step: int
    last_step: int
    # The step of the first line's middle point: the points are spread evenly, so this is
    # the step at the middle column (the midpoint of first and last only when no step is
    # missing).
    middle_step: int


def plot_of(lines: Sequence[Series]) -> Plot | None:
    """The plot of these series (their joint finite range and steps); None with no finite point."""
    ranges = [r for series in lines if (r := series.finite_range()) is not None]
    drawn = tuple(series for series in lines if series.finite_range() is not None)
    if not ranges:
        return None
    first = drawn[0].steps
    return Plot(drawn, min(r[0] for r in ranges), max(r[1] for r in ranges),
                min(series.steps[0] for series in drawn), max(series.steps[-1] for series in drawn),
                first[(len(first) - 1) // 2])


def dot_rows(values: Sequence[float], low: float, high: float, rows: int) -> list[int]:
    """Each value's dot row (0 at the top) of ``rows`` dot rows spanning ``low``..``high``;
    a flat series sits in the middle."""
    if high <= low:
        return [rows // 2] * len(values)
    scale = (rows - 1) / (high - low)
    return [(rows - 1) - round((value - low) * scale) for value in values]


def raster(points: Sequence[int], columns: int) -> list[tuple[int, int, int]]:
    """The line through ``points`` (dot rows) spread evenly over ``columns`` dot columns, as
    each column's run of dots (column, top row, bottom row): each column reaches from the
    previous one's row to its own, so a steep step or a one-point spike stays connected."""
    if not points:
        return []
    if len(points) == 1:
        return [(columns - 1, points[0], points[0])]
    runs = []
    last = len(points) - 1
    previous = points[0]
    for x in range(columns):
        # The value at this column, interpolated between the two points around it.
        where = x * last / max(columns - 1, 1)
        left = min(int(where), last - 1)
        y = round(points[left] + (points[left + 1] - points[left]) * (where - left))
        runs.append((x, min(previous, y), max(previous, y)))
        previous = y
    return runs


def step_axis(first: int, middle: int, last: int, width: int) -> str:
    """``width`` columns of axis line with the first step at its left, the last at its
    right and the middle one at its centre where they leave room."""
    axis = ["─"] * width

    def put(label: str, at: int) -> bool:
        at = max(0, min(at, width - len(label)))
        if any(c != "─" for c in axis[max(0, at - 1): at + len(label) + 1]) or len(label) > width:
            return False
        axis[at: at + len(label)] = label
        return True

    put(str(first), 0)
    if last != first:
        put(str(last), width - len(str(last)))
        put(str(middle), (width - len(str(middle))) // 2)
    return "".join(axis)


# What colours a run of a drawn row: a line's number (0 the panel's own), or these.
AXIS = -1
BLANK = -2
Row = list[tuple[str, int]]


class LineChart(Widget):
    """A braille line chart of one or more series on one value axis.

    Drawn through the line API: each row is kept as a Strip until the data,
    the size or the theme changes, so repainting the dashboard (a key, the
    clock) costs a chart nothing but handing its rows over.
    """

    COMPONENT_CLASSES = {"line-chart--axis",
                         *(f"line-chart--line-{number}" for number in range(len(LINE_STYLES)))}
    DEFAULT_CSS = """
    LineChart {
        height: 1fr;
        min-height: 3;
    }
    LineChart > .line-chart--axis {
        color: $text-muted;
    }
    """ + "".join(f"""    LineChart > .line-chart--line-{number} {{
        color: {colour};
    }}
    """ for number, colour in enumerate(LINE_STYLES))

    def __init__(self) -> None:
        super().__init__()
        self._plot: Plot | None = None
        # The plot and size the rows below were drawn for, and the rows.
        self._drawn: tuple[Plot | None, tuple[int, int], tuple[tuple[int, int], ...]] | None = None
        self.rows: list[Row] = []
        self._strips: dict[int, Strip] = {}
        self._styles: dict[int, Style] | None = None

    def show(self, lines: Sequence[Series]) -> None:
        """Draw ``lines`` (the first in the panel's own colour); redrawn only when their
        data or the chart's size changed."""
        self._plot = plot_of(lines)
        if self._rasterise():
            self.refresh()

    def on_resize(self) -> None:
        if self._rasterise():
            self.refresh()

    def notify_style_update(self) -> None:
        """A new theme or state colour: the rows are the same, their colours are not."""
        super().notify_style_update()
        self._strips.clear()
        self._styles = None

    def _rasterise(self) -> bool:
        """Lay the plot out in rows of cells; False when nothing changed since the last time."""
        plot, size = self._plot, (self.size.width, self.size.height)
        lengths = tuple((len(s), s.rewrites) for s in plot.lines) if plot else ()
        key = (plot, size, lengths)
        if key == self._drawn:
            return False
        self._drawn = key
        self.rows = self._layout(plot, *size) if plot is not None else []
        self._strips.clear()
        return True

    @staticmethod
    def _layout(plot: Plot, width: int, height: int) -> list[Row]:
        """The chart as rows of (text, colour) runs, the step axis last; none where
        ``width`` × ``height`` leaves no room for a plot beside the value axis."""
        high, middle, low = (format_number(v) for v in
                             (plot.high, (plot.high + plot.low) / 2, plot.low))
        label_width = max(len(high), len(middle), len(low))
        columns, rows = width - label_width - 1, height - 1
        if columns < 2 or rows < 1:
            return []
        labels = {0: high, rows - 1: low}
        if rows >= 5 and plot.high > plot.low:
            labels[(rows - 1) // 2] = middle
        # Each cell's dot bits, and the line that set its last dot (its colour).
        bits = [[0] * columns for _ in range(rows)]
        owner = [[0] * columns for _ in range(rows)]
        for number, series in enumerate(plot.lines):
            values = series.downsample(2 * columns)
            points = dot_rows(values, plot.low, plot.high, 4 * rows)
            colour = number % len(LINE_STYLES)
            for x, top, bottom in raster(points, 2 * columns):
                cell_x, masks = x // 2, _RUN_BITS[x % 2]
                for cell_y in range(top // 4, bottom // 4 + 1):
                    first, end = max(top - 4 * cell_y, 0), min(bottom - 4 * cell_y, 3)
                    bits[cell_y][cell_x] |= masks[first][end]
                    owner[cell_y][cell_x] = colour
        drawn: list[Row] = []
        for row in range(rows):
            label = labels.get(row)
            runs: Row = [((label or "").rjust(label_width) + ("┤" if label else "│"), AXIS)]
            # Cells join the run before them where they look the same in it (a blank after a
            # line is a blank in its colour): a row of one line is three segments, not dozens.
            text: list[str] = []
            colour = BLANK
            for cell, line in zip(bits[row], owner[row]):
                if cell and line != colour:
                    runs.append(("".join(text), colour))
                    text, colour = [], line
                text.append(chr(BRAILLE_BASE + cell) if cell else " ")
            runs.append(("".join(text), colour))
            drawn.append([run for run in runs if run[0]])
        axis = step_axis(plot.first_step, plot.middle_step, plot.last_step, columns)
        drawn.append([(" " * label_width + "└" + axis, AXIS)])
        return drawn

    def render_line(self, y: int) -> Strip:
        strip = self._strips.get(y)
        if strip is None:
            strip = self._strips[y] = self._strip(y)
        return strip

    def _strip(self, y: int) -> Strip:
        if self._styles is None:  # the background and colours, as of the last style change
            base = self.rich_style
            self._styles = {AXIS: base + self.get_component_rich_style("line-chart--axis"),
                            BLANK: base}
            for number in range(len(LINE_STYLES)):
                self._styles[number] = base + self.get_component_rich_style(f"line-chart--line-{number}")
        styles, width = self._styles, self.size.width
        if y >= len(self.rows):
            return Strip.blank(width, styles[BLANK])
        segments = [Segment(text, styles[colour]) for text, colour in self.rows[y]]
        if self._drawn is not None and self._drawn[1][0] == width:
            return Strip(segments, width)  # laid out to this width: no measuring, no padding
        return Strip(segments).adjust_cell_length(width, styles[BLANK])  # a resize on its way
