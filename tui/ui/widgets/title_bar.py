"""The first row of every screen: what it shows, in one line.

A screen's title changes with each key (``[``/``]`` in the step detail, the
cursor in the steps table and the chart). A ``Static`` asks for a new layout
of the whole screen on every ``update``, which on this machine was the larger
part of a ``j`` press over 100,000 steps; this widget is one fixed row that is
only repainted. A title longer than the screen ends in an ellipsis, so the
words each screen puts first (the step, the metric) are the ones kept.
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget


class TitleBar(Widget, can_focus=False):
    """One row of Content, repainted (never re-laid-out) when it changes."""

    DEFAULT_CSS = """
    TitleBar {
        height: 1;
        width: 1fr;
        padding: 0 1;
        background: $panel;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, content: Content | str = "", *, id: str | None = "title") -> None:
        super().__init__(id=id)
        self._content = Content(content) if isinstance(content, str) else content

    def update(self, content: Content | str) -> None:
        """Show ``content`` (plain text is drawn literally, never as markup)."""
        content = Content(content) if isinstance(content, str) else content
        if content != self._content:
            self._content = content
            self.refresh()

    def render(self) -> Content:
        return self._content
