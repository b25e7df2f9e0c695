"""Every metric of one step, grouped by prefix, against the step before and the run.

Each row reads: the key, its value at the step, the change from the
metric's previous point (the previous validation, for validation metrics),
the run's median, and where the value came from when it was not the console
log. Medians of a 100k-step run take a moment, so they are worked out in a
thread and filled in when ready, and kept until the series grows.

The table draws only its visible lines from a list of plain rows (a
DataTable cleared and refilled with 150 rows on every ``[``/``]`` cost most
of what the key took): moving to another step replaces the list and repaints
the screenful, and the cursor stays on the same metric.
"""

from __future__ import annotations

import asyncio
import math
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from tui.model.merge import Source, TaggedSeries
from tui.model.run_model import RunModel
from tui.parsers.text import safe_text
from tui.ui.format import format_delta, format_exact, format_number
from tui.ui.widgets.cursor_table import CursorTable

# The groups in the order a user reads a step (issue 6); others follow alphabetically.
GROUP_ORDER = ("actor/", "critic/", "response_length/", "timing_s/", "perf/", "val-core/",
               "val-aux/", "val/")
UNGROUPED = "other"
HEADER = ("metric", "value", "Δ prev", "run median", "source")
MEDIAN = HEADER.index("run median")
PENDING = "…"
# Each cell has a space either side (as a DataTable's cells do).
PAD = 1


def group_of(key: str) -> str:
    """The key's prefix up to its first ``/``, which names its group."""
    head, slash, _ = key.partition("/")
    return f"{head}/" if slash else UNGROUPED


def grouped(keys: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Keys by group: the known groups first in reading order, then the rest, keys sorted."""
    groups: dict[str, list[str]] = {}
    for key in sorted(keys):
        groups.setdefault(group_of(key), []).append(key)

    def rank(name: str) -> tuple[int, str]:
        known = name in GROUP_ORDER
        return (GROUP_ORDER.index(name) if known else len(GROUP_ORDER) + (name == UNGROUPED), name)

    return [(name, groups[name]) for name in sorted(groups, key=rank)]


def run_median(values: array) -> float | None:
    """Median of the finite values (None when there are none): numpy's partition, a
    millisecond for 100k points where sorting them in Python took twenty."""
    import numpy

    points = numpy.frombuffer(values, dtype=numpy.float64)
    finite = points[numpy.isfinite(points)]
    return float(numpy.median(finite)) if finite.size else None


@dataclass(slots=True)
class Row:
    """One line of the table: a group's heading (``key`` None) or a metric's cells, as
    shown (keys from the log already made inert by ``safe_text``)."""

    key: str | None
    cells: list[str]


class StepMetrics(CursorTable):
    """A row per metric of the step, under a row per group; the header stays on top."""

    BINDINGS = [
        Binding("k,up", "cursor(-1)", "Up", show=False, tooltip="the metric above"),
        Binding("j,down", "cursor(1)", "Down", show=False, tooltip="the metric below"),
        Binding("pageup", "page(-1)", "Page up", show=False, tooltip="a screenful up"),
        Binding("pagedown", "page(1)", "Page down", show=False, tooltip="a screenful down"),
        Binding("home", "to(0)", "First", show=False, tooltip="the first row"),
        Binding("end", "to(-1)", "Last", show=False, tooltip="the last row"),
        Binding("enter", "select", "Chart", show=False, tooltip="chart the highlighted metric"),
    ]
    COMPONENT_CLASSES = {"step-metrics--header", "step-metrics--group", "step-metrics--even-row",
                         "step-metrics--cursor", "step-metrics--pending"}
    DEFAULT_CSS = """
    StepMetrics { height: 1fr; background: $surface; }
    StepMetrics:focus { background-tint: $foreground 5%; }
    StepMetrics > .step-metrics--header { text-style: bold; background: $panel; color: $foreground; }
    StepMetrics:focus > .step-metrics--header { background-tint: $foreground 5%; }
    StepMetrics > .step-metrics--group { text-style: bold; }
    StepMetrics > .step-metrics--even-row { background: $surface-lighten-1 50%; }
    StepMetrics:dark > .step-metrics--even-row { background: $surface-darken-1 40%; }
    StepMetrics > .step-metrics--pending { color: $text-muted; }
    StepMetrics > .step-metrics--cursor {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
    }
    StepMetrics:focus > .step-metrics--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    """

    class Selected(Message):
        """Enter (or a double click) on a metric: chart it."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []
        self._widths = [cell_len(title) for title in HEADER]
        # key → (points, rewrites, median) of the series when it was worked out.
        self._medians: dict[str, tuple[int, int, float | None]] = {}
        self._sized = Size(0, 0)

    # -- what it shows -------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def highlighted_key(self) -> str | None:
        """The metric under the cursor (None on a group row)."""
        return self.rows[self.cursor].key if 0 <= self.cursor < len(self.rows) else None

    def cells(self, key: str) -> list[str] | None:
        """The row of ``key`` as shown, cell by cell (None: the step has no such metric)."""
        return next((row.cells for row in self.rows if row.key == key), None)

    def show_step(self, model: RunModel, step: int) -> None:
        """Show ``step``'s metrics, keeping the cursor on the same metric."""
        keep = self.highlighted_key
        present = {key: series for key, series in model.series.items()
                   if series.value_at(step) is not None}
        rows: list[Row] = []
        for group, keys in grouped(present):
            rows.append(Row(None, [f"{safe_text(group)}  ({len(keys)})", "", "", "", ""]))
            rows.extend(Row(key, self._cells(key, present[key], step)) for key in keys)
        self.rows = rows
        # Columns only widen: ``[`` and ``]`` keep the table's width, so a step repaints
        # its rows without a new layout (a narrower step changed the virtual size, and the
        # layout, the scroll bars and the Resize after it were frames drawn after the key's).
        self._widths = [max([width] + [cell_len(row.cells[at]) for row in rows])
                        for at, width in enumerate(self._widths)]
        self.virtual_size = Size(self._row_width(), len(rows) + 1)
        # On the same metric as before, else on the first metric (row 0 is a group).
        kept = next((at for at, row in enumerate(rows) if keep is not None and row.key == keep), 1)
        self._move(kept)
        self.refresh()
        self.run_worker(self._fill_medians(present), exclusive=True, group="medians")

    def _cells(self, key: str, series: TaggedSeries, step: int) -> list[str]:
        at = bisect_left(series.steps, step)
        value = series.values[at]
        delta = (format_delta(value - series.values[at - 1])
                 if at > 0 and math.isfinite(series.values[at - 1]) else "")
        source = series.source_at(step)
        cached = self._cached_median(key, series)
        median = PENDING if cached is False else format_number(cached) if cached is not None else ""
        return [f"  {safe_text(key)}", format_exact(value), delta, median,
                source.label if source not in (None, Source.CONSOLE) else ""]

    def _cached_median(self, key: str, series: TaggedSeries) -> float | None | bool:
        """The median if worked out for the series as it is now, else False."""
        cached = self._medians.get(key)
        if cached is None or cached[:2] != (len(series), series.rewrites):
            return False
        return cached[2]

    async def _fill_medians(self, present: dict[str, TaggedSeries]) -> None:
        stale = {key: (len(series), series.rewrites, series)
                 for key, series in present.items() if self._cached_median(key, series) is False}
        if not stale:
            return
        # The thread takes its own copy of each series (one C call, so a step
        # appended meanwhile on the event loop cannot tear it).
        medians = await asyncio.to_thread(
            lambda: {key: run_median(series.values[:count])
                     for key, (count, _, series) in stale.items()})
        for key, median in medians.items():
            count, rewrites, _ = stale[key]
            self._medians[key] = (count, rewrites, median)
        for row in self.rows:
            if row.key in medians:
                median = medians[row.key]
                row.cells[MEDIAN] = format_number(median) if median is not None else ""
        self.refresh()

    # -- keys ----------------------------------------------------------------

    def action_to(self, row: int) -> None:
        self._move(row % len(self.rows) if self.rows else 0)

    def action_select(self) -> None:
        key = self.highlighted_key
        if key is not None:
            self.post_message(self.Selected(key))

    # -- drawing -------------------------------------------------------------

    def _row_width(self) -> int:
        return sum(width + 2 * PAD for width in self._widths)

    def render_line(self, y: int) -> Strip:
        """Line 0 is the header, fixed; the rest are rows from the scroll position."""
        base = self.rich_style
        if y == 0:
            cells, style = list(HEADER), base + self.get_component_rich_style("step-metrics--header")
            pending = None
        else:
            at = int(self.scroll_y) + y - 1
            if not 0 <= at < len(self.rows):
                return Strip.blank(self.size.width, base)
            row = self.rows[at]
            cells, style = row.cells, base
            if row.key is None:
                style += self.get_component_rich_style("step-metrics--group")
            if at % 2 == 0:
                style += self.get_component_rich_style("step-metrics--even-row")
            if at == self.cursor:
                style += self.get_component_rich_style("step-metrics--cursor")
            pending = (style + self.get_component_rich_style("step-metrics--pending")
                       if cells[MEDIAN] == PENDING and at != self.cursor else None)
        segments = [Segment(" " * PAD + set_cell_size(text, width) + " " * PAD,
                            pending if at_column == MEDIAN and pending is not None else style)
                    for at_column, (text, width) in enumerate(zip(cells, self._widths))]
        width = self.scrollable_content_region.width
        scroll_x = int(self.scroll_x)
        return Strip(segments).crop(scroll_x, scroll_x + width).extend_cell_length(width, style)

    def on_resize(self, event: events.Resize) -> None:
        """Keep the cursor in view when the table's own size changed (a new virtual size
        from ``show_step`` comes with a Resize too, after the rows were drawn)."""
        if event.size != self._sized:
            self._sized = event.size
            self._move(self.cursor)
