"""The panels laid out as a grid whose column count follows the terminal's width.

Eight panels fit as 2 columns × 4 rows down to 80×24 (1-row sparklines) and
as 4 × 2 on wide terminals. More height brings four more panels (120×40,
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
    """

    def __init__(self, concepts: Iterable[Concept], extra: Iterable[Concept] = EXTRA_CONCEPTS) -> None:
        super().__init__()
        self.concepts = tuple(concepts)
        self.extra = tuple(extra)
        self.roomy = False
        self._layout: tuple[int, int, bool] | None = None

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
        (at 200×50 the eight panels were twenty rows of solid blocks)."""
        columns = columns_for(event.size.width)
        every = len(self.concepts) + len(self.extra)
        roomy = event.size.height >= ROOMY_PANEL_ROWS * math.ceil(every / columns)
        shown = every if roomy else len(self.concepts)
        layout = (columns, math.ceil(shown / columns), roomy)
        if layout == self._layout:
            return  # setting them again would lay out again, and resize again: a loop
        grew = roomy and not self.roomy
        self._layout, self.roomy = layout, roomy
        for panel in list(self.query(MetricPanel))[len(self.concepts):]:
            panel.display = roomy
        self.styles.grid_size_columns, self.styles.grid_size_rows = layout[:2]
        if grew:
            self.post_message(self.Grown())

    class Grown(Message):
        """The extra panels came on screen: they need drawing."""
