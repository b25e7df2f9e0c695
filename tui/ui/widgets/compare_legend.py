"""The compare screen's legend: each run's letter and marker in its colour, then its name.

One row: the tables head their columns with the letters alone (a run's name is
often a long path, and three names would leave no room for the values), so
this row is where a letter is read back as a run. Names that do not fit keep
their start and their end, where runs of a sweep differ. The marker is drawn
as well as the colour so the runs stay apart without colour (NO_COLOR, a
monochrome terminal): the charts draw each run with it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from textual.content import Content
from textual.widget import Widget

from tui.parsers.text import safe_text


def elide_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, its middle replaced by ``…`` if need be."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def without_common_start(names: Sequence[str]) -> list[str]:
    """``names`` less the start they all share, up to its last ``/``, ``_``, ``-`` or ``.``
    (``…/034_gpg``, ``…/035_gpg`` from ``runs/sweep/034_gpg``, ``runs/sweep/035_gpg``): in
    a narrow legend the part that tells runs apart is then the part kept."""
    if len(names) < 2:
        return list(names)
    shared = os.path.commonprefix(list(names))
    cut = max(shared.rfind(mark) for mark in "/_-.") + 1
    if cut <= 1:
        return list(names)
    return ["…" + name[cut:] for name in names]


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
        names = [name for *_, name in self.entries]
        if sum(len(name) + 7 for name in names) > self.size.width:
            names = without_common_start(names)
        for index, ((letter, glyph, style, _), name) in enumerate(zip(self.entries, names)):
            if index:
                parts.append("   ")
            head = f"{letter} {glyph} "
            parts.append((head, style))
            parts.append(elide_middle(safe_text(name), room - len(head)))
        return Content.assemble(*parts)
