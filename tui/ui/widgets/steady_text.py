"""A block of text that is repainted in place and only ever grows.

The step detail names the rules each step broke above its metrics table, and
``[``/``]`` change that text on every step. A ``Static`` lays the whole screen
out on every ``update``, and a layout of that screen resized the table under
it (a step with one rule fewer) and drew its scroll bar again, two frames
after the key's own. This block keeps the height it reached: a text that fits
is only repainted, and only a taller one asks for a layout, so the table
below stays where it is while the user steps through the run.
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget


class SteadyText(Widget, can_focus=False):
    """Rows of Content; as tall as the tallest text it has shown (up to its max-height)."""

    DEFAULT_CSS = """
    SteadyText {
        height: auto;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._content = Content("")

    def update(self, content: Content) -> None:
        """Show ``content`` (literal Content: what came from a log is never markup)."""
        if content == self._content:
            return
        self._content = content
        self.refresh()  # a repaint, which also drops the old text's render and height
        width, height = self.content_size
        if self.is_mounted and width and self.get_content_height(self.size, self.app.size, width) <= height:
            # Fits the rows the block has: keep them (a shorter text leaves the rest blank).
            if self.styles.min_height is None or self.styles.min_height.value != height:
                self.styles.min_height = height
        else:
            self.refresh(layout=True)

    @property
    def content(self) -> Content:
        """The text shown."""
        return self._content

    def render(self) -> Content:
        return self._content
