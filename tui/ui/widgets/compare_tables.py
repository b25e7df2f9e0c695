"""The two tables of the compare screen: the runs' numbers side by side, and the
settings in which the runs differ.

Both are plain DataTables with one column per run, in the legend's order and
colours, so a column is found by the same colour as its line in the charts.
Every name and value is log text: it goes through ``safe_text`` and is drawn
as text, never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

from tui.model.aliases import Concept
from tui.model.comparison import BETTER, RunNumbers, best_run
from tui.parsers.run_config import ABSENT, UNKNOWN, RunConfig, differing_keys
from tui.parsers.text import safe_text
from tui.ui.format import format_number
from tui.ui.telling_names import elide_middle

# The numbers of each metric, one row each, in this order.
STATS = (("last", "last"), ("best", "best"), ("mean", "mean"))
# The settings table shares the width between the setting's name and the runs' values:
# a name gets this share (within these bounds), each value an equal part of the rest.
KEY_SHARE = 0.45
KEY_WIDTH = (20, 64)
VALUE_WIDTH = (8, 40)
# Columns a DataTable spends around each cell.
CELL_PADDING = 2


def _cell(value: float | None) -> str:
    return "—" if value is None else format_number(value)


class CompareNumbers(DataTable[Text]):
    """Rows: each metric's last, best and mean; columns: the runs. The best run of a
    metric with a better direction is marked ``▲`` (higher is better) or ``▼``."""

    DEFAULT_CSS = "CompareNumbers { height: 1fr; }"

    def __init__(self) -> None:
        super().__init__(id="compare-numbers", zebra_stripes=True, cursor_type="row")
        self._shown: tuple | None = None

    def show(self, heads: Sequence[Text], numbers: Sequence[tuple[Concept, Sequence[RunNumbers | None]]]) -> None:
        """``heads``: each run's column head (its letter and marker, in its colour);
        ``numbers``: each metric and each run's numbers for it (None: the run lacks it)."""
        shown = (tuple(heads), tuple((c.id, tuple(n)) for c, n in numbers))
        if shown == self._shown:
            return
        self._shown = shown
        self.clear(columns=True)
        self.add_column(Text("metric"), key="metric")
        for index, head in enumerate(heads):
            self.add_column(head, key=f"run-{index}")
        for concept, per_run in numbers:
            winner = best_run(per_run, concept)
            for field, label in STATS:
                if field == "best" and concept.id not in BETTER:
                    continue  # no better direction: a "best" would mislead
                head = Text(concept.title if field == "last" else "", style="bold")
                head.append(f" {label}" if field == "last" else f"  {label}", style="dim")
                cells = [head]
                for index, run in enumerate(per_run):
                    value = None if run is None else getattr(run, field)
                    cell = Text(_cell(value))
                    if field == "best" and index == winner:
                        cell.append(" ▲" if BETTER[concept.id] > 0 else " ▼", style="bold")
                    cells.append(cell)
                self.add_row(*cells, key=f"{concept.id}-{field}")


class ConfigDiff(DataTable[Text]):
    """Rows: the settings whose values differ between the runs (those the launch
    commands set first); columns: the setting, then each run's value."""

    DEFAULT_CSS = "ConfigDiff { height: 1fr; }"

    def __init__(self) -> None:
        super().__init__(id="compare-config", zebra_stripes=True, cursor_type="row")
        self._shown: tuple | None = None
        self.differing: list[str] = []

    def show(self, heads: Sequence[Text], configs: Sequence[RunConfig | None], width: int) -> None:
        """``heads``: each run's column head; ``configs``: each run's settings (None: none
        found); ``width``: the columns the table has (names and values are cut to fit)."""
        shown = (tuple(heads), tuple(id(config) for config in configs), width)
        if shown == self._shown:
            return
        self._shown = shown
        found = [config for config in configs if config is not None]
        set_by_hand = set().union(*(config.overridden for config in found)) if found else set()
        # What the user chose on the command line first; then the rest, by name.
        self.differing = sorted(differing_keys(configs), key=lambda key: (key not in set_by_hand, key))
        key_width = min(max(int(width * KEY_SHARE), KEY_WIDTH[0]), KEY_WIDTH[1])
        room = (width - key_width - CELL_PADDING * (len(heads) + 1)) // max(1, len(heads))
        value_width = min(max(room, VALUE_WIDTH[0]), VALUE_WIDTH[1])
        self.clear(columns=True)
        self.add_column(Text("setting"), key="setting", width=key_width)
        for index, head in enumerate(heads):
            self.add_column(head, key=f"run-{index}", width=value_width)
        for key in self.differing:
            # A long dotted name keeps its end: the setting itself, not the section it is in;
            # a long value its start and end (two data paths differ at either).
            label = Text(_tail(safe_text(key), key_width), style="bold" if key in set_by_hand else "")
            cells = [label]
            for config in configs:
                value = UNKNOWN if config is None else config.shown(key)
                cells.append(Text(elide_middle(safe_text(value), value_width),
                                  style="dim" if value in (ABSENT, UNKNOWN) else ""))
            self.add_row(*cells, key=key)


def _tail(text: str, width: int) -> str:
    """``text`` cut to its last ``width`` characters, behind ``…``, where it is longer."""
    return text if len(text) <= width else "…" + text[len(text) - width + 1:]
