"""The panels laid out as a grid whose column count follows the terminal's width.

Eight panels fit as 2 columns × 4 rows down to 80×24 (1-row sparklines) and
as 4 × 2 on wide terminals. Below that (a tmux split: 80×12, 60×20) each panel
is one line: its name, value, change and a sparkline. More height brings four more panels (120×40,
200×50), and a panel left with room for a chart draws one (200×50; see
``metric_panel.CHART_MIN_ROWS``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from tui.model.aliases import Concept
from tui.ui.one_frame import one_frame
from tui.ui.widgets.metric_panel import MetricPanel

# From this width on, four panels side by side still leave each a readable numbers line.
WIDE_COLUMNS_FROM = 150
# A bordered panel needs this many rows (its borders, its numbers, a sparkline) and columns
# (its title with a rule's name); a grid that cannot give each panel as much, a tmux split
# (80×12, 60×20, 100×15), lays them out compact: one line each, no border.
PANEL_MIN_ROWS = 4
PANEL_MIN_COLUMNS = 32
# A compact line's least width: its name, value and change, and a few sparkline columns.
COMPACT_LINE_MIN = 40
# A panel this tall shows its numbers and a sparkline of a few rows; a grid with room
# for every panel at this height shows the extra panels rather than taller blocks.
ROOMY_PANEL_ROWS = 6

# Shown when the terminal has room (120×40, 200×50): what the checklist also asks to
# watch, after the eight core panels. verl's own keys.
EXTRA_CONCEPTS: tuple[Concept, ...] = (
    Concept("clipfrac", "clip fraction", ("actor/pg_clipfrac",)),
    Concept("response-clip", "response clip ratio", ("response_length/clip_ratio",)),
    Concept("throughput", "throughput (tokens/s)", ("perf/throughput",)),
    Concept("memory", "peak memory (GB)", ("perf/max_memory_allocated_gb",
                                            "perf/max_memory_reserved_gb")),
)


def columns_for(width: int) -> int:
    """How many panel columns a terminal this wide gets."""
    return 4 if width >= WIDE_COLUMNS_FROM else 2


def compact_columns(panels: int, width: int, height: int) -> int:
    """Compact lines side by side: one column where every panel has a line of its own, else
    two where the width allows (each line keeps its name, its numbers and a sparkline)."""
    return 1 if height >= panels or width < 2 * COMPACT_LINE_MIN else 2


class MetricGrid(Widget):
    """One MetricPanel per dashboard concept; the arrows move the focus across the grid."""

    BINDINGS = [
        Binding("left", "move(-1, 0)", "Left", show=False, tooltip="focus the panel to the left"),
        Binding("right", "move(1, 0)", "Right", show=False, tooltip="focus the panel to the right"),
        Binding("up", "move(0, -1)", "Up", show=False, tooltip="focus the panel above"),
        Binding("down", "move(0, 1)", "Down", show=False, tooltip="focus the panel below"),
    ]

    DEFAULT_CSS = """
    MetricGrid {
        layout: grid;
        grid-size: 2;
        grid-rows: 1fr;
        grid-columns: 1fr;
        height: 1fr;
    }
    MetricGrid.-compact {
        grid-rows: 1;
        grid-gutter: 0 2;
    }
    /* A small pane: one line per panel, no border (the panel's name line shows). */
    MetricGrid.-compact MetricPanel {
        layout: horizontal;
        height: 1;
        min-height: 1;
        padding: 0;
        border: none;
        background: $surface;
    }
    MetricGrid.-compact MetricPanel > #name {
        display: block;
        width: 19;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        text-style: bold;
    }
    MetricGrid.-compact MetricPanel.-empty > #name {
        color: $text-muted;
        text-style: none;
    }
    MetricGrid.-compact MetricPanel.-warning > #name { color: $warning; }
    MetricGrid.-compact MetricPanel.-critical > #name { color: $error; }
    MetricGrid.-compact MetricPanel:focus > #name { text-style: bold reverse; }
    MetricGrid.-compact MetricPanel > PanelStats {
        width: 18;
    }
    MetricGrid.-compact MetricPanel > Sparkline {
        width: 1fr;
        height: 1;
        margin-left: 1;
    }
    MetricGrid.-compact MetricPanel > #legend, MetricGrid.-compact MetricPanel > LineChart {
        display: none;
    }
    """

    def __init__(self, concepts: Iterable[Concept], extra: Iterable[Concept] = EXTRA_CONCEPTS) -> None:
        super().__init__()
        self.concepts = tuple(concepts)
        self.extra = tuple(extra)
        self.roomy = False
        self.compact = False  # one line per panel (a small pane)
        self._layout: tuple[int, int, bool, bool] | None = None

    def compose(self) -> ComposeResult:
        for concept in self.concepts:
            yield MetricPanel(concept, id=f"panel-{concept.id}")
        for concept in self.extra:
            panel = MetricPanel(concept, id=f"panel-{concept.id}")
            panel.display = False
            yield panel

    def shown_panels(self) -> list[MetricPanel]:
        """The panels on screen now (the extra ones only where there is room)."""
        return [panel for panel in self.query(MetricPanel) if panel.display]

    async def action_move(self, across: int, down: int) -> None:
        panels = self.shown_panels()
        focused = self.screen.focused
        at = panels.index(focused) if focused in panels else 0
        target = at + across + down * columns_for(self.size.width)
        if 0 <= target < len(panels):
            async with one_frame(self.screen) as frame:
                frame.focus(panels[target])

    def on_resize(self, event: events.Resize) -> None:
        """Columns by width; more height brings the extra panels, not taller sparklines
        (at 200×50 the eight panels were twenty rows of solid blocks); too little height or
        width for bordered panels, one line per panel (``compact_columns``)."""
        width, height = event.size
        columns = columns_for(width)
        every = len(self.concepts) + len(self.extra)
        compact = (height < PANEL_MIN_ROWS * math.ceil(len(self.concepts) / columns)
                   or width < PANEL_MIN_COLUMNS * columns)
        roomy = not compact and height >= ROOMY_PANEL_ROWS * math.ceil(every / columns)
        if compact:
            columns = compact_columns(len(self.concepts), width, height)
        shown = every if roomy else len(self.concepts)
        layout = (columns, math.ceil(shown / columns), roomy, compact)
        if layout == self._layout:
            return  # setting them again would lay out again, and resize again: a loop
        grew = roomy and not self.roomy
        self._layout, self.roomy, self.compact = layout, roomy, compact
        for panel in list(self.query(MetricPanel))[len(self.concepts):]:
            panel.display = roomy
        self.set_class(compact, "-compact")
        self.styles.grid_size_columns, self.styles.grid_size_rows = layout[:2]
        if grew:
            self.post_message(self.Grown())

    class Grown(Message):
        """The extra panels came on screen: they need drawing."""
