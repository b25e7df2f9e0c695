"""The compare screen's legend: each run's letter and marker in its colour, then its name.

One row: the tables head their columns with the letters alone (a run's name is
often a long path, and three names would leave no room for the values), so
this row is where a letter is read back as a run. Names that do not fit keep
the part that tells the runs apart (``telling_names``). The marker is drawn
as well as the colour so the runs stay apart without colour (NO_COLOR, a
monochrome terminal): the charts draw each run with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widget import Widget

from tui.parsers.text import safe_text
from tui.ui.telling_names import telling_names


class CompareLegend(Widget, can_focus=False):
    """``A ⣿ cola/grpo   B • cola/ppo   …``: the runs in the charts' and tables' order."""

    DEFAULT_CSS = """
    CompareLegend { height: 1; width: 1fr; padding: 0 1; text-wrap: nowrap; }
    """

    def __init__(self) -> None:
        super().__init__(id="compare-legend")
        self.entries: list[tuple[str, str, str, str]] = []

    def show(self, entries: Sequence[tuple[str, str, str, str]]) -> None:
        """``entries``: (letter, glyph, style, name) of each run."""
        if list(entries) != self.entries:
            self.entries = list(entries)
            self.refresh()

    def render(self) -> Content:
        if not self.entries:
            return Content("")
        room = max(8, (self.size.width - 3 * (len(self.entries) - 1)) // len(self.entries))
        parts: list[Content | tuple[str, str] | str] = []
        heads = [f"{letter} {glyph} " for letter, glyph, *_ in self.entries]
        names = telling_names([safe_text(name) for *_, name in self.entries],
                              room - max(len(head) for head in heads))
        for index, ((_, _, style, _), head, name) in enumerate(zip(self.entries, heads, names)):
            if index:
                parts.append("   ")
            parts.append((head, style))
            parts.append(name)
        return Content.assemble(*parts)
