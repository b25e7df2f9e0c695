"""The panels laid out as a grid whose column count follows the terminal's width.

Eight panels fit as 2 columns × 4 rows down to 80×24 (1-row sparklines) and
as 4 × 2 on wide terminals, where the extra height goes to the sparklines.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widget import Widget

from tui.model.aliases import Concept
from tui.ui.widgets.metric_panel import MetricPanel

# From this width on, four panels side by side still leave each a readable numbers line.
WIDE_COLUMNS_FROM = 150


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

    def __init__(self, concepts: Iterable[Concept]) -> None:
        super().__init__()
        self.concepts = tuple(concepts)

    def compose(self) -> ComposeResult:
        for concept in self.concepts:
            yield MetricPanel(concept, id=f"panel-{concept.id}")

    def action_move(self, across: int, down: int) -> None:
        panels = list(self.query(MetricPanel))
        focused = self.screen.focused
        at = panels.index(focused) if focused in panels else 0
        target = at + across + down * columns_for(self.size.width)
        if 0 <= target < len(panels):
            panels[target].focus()

    def on_resize(self, event: events.Resize) -> None:
        columns = columns_for(event.size.width)
        self.styles.grid_size_columns = columns
        self.styles.grid_size_rows = math.ceil(len(self.concepts) / columns)
