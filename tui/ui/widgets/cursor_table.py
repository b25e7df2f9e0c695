"""A table drawn line by line under a fixed header, with a row cursor.

The steps table (100,000 rows) and the step detail's metrics (150 rows per
``[``/``]``) both draw only their visible lines from plain data; what they
share is the cursor: keys and clicks move it, the table scrolls to keep it in
view, and a move that does not scroll repaints only the two rows it left and
reached.
"""

from __future__ import annotations

from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView


class CursorTable(ScrollView, can_focus=True):
    """Line 0 is the header; row ``r`` is virtual line ``r + 1``."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cursor = 0
        # What the scroll bars were last fitted to in a layout (``_size_updated``).
        self._scrollbars_for: tuple | None = None

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size,
                      layout: bool = True) -> bool:
        """Fit the scroll bars in the layout only when the table's size changed or its
        lines came to overflow it, or stopped to (a new length is fitted as it is set,
        ``watch_virtual_size``).

        Textual's layout hands a ScrollView the size of its visible area as its virtual
        size, which never equals the one the table sets (its lines), so ScrollView saw a
        change on every layout and repainted the scroll bars, after the frame was drawn:
        one more frame for a ``[`` or a tab key on any screen holding a table."""
        lines = self.virtual_size
        fit = (size, container_size, lines.height > container_size.height,
               lines.width > container_size.width)
        if fit == self._scrollbars_for:
            return False
        self._scrollbars_for = fit
        return super()._size_updated(size, virtual_size, container_size, layout)

    def watch_virtual_size(self, lines: Size) -> None:
        """The scroll bars take the table's new length now, drawn in the key's frame (``[``
        onto a step with fewer metrics): fitted while Textual lays the screen out for that
        frame, they were repainted in a frame of their own."""
        if self.is_mounted and self.size:
            self._scroll_update(lines)

    @property
    def row_count(self) -> int:
        raise NotImplementedError

    def action_select(self) -> None:
        """Enter (or a double click) on the cursor's row."""
        raise NotImplementedError

    def _moved(self) -> None:
        """The cursor went to another row (a hook: nothing to do by default)."""

    def action_cursor(self, delta: int) -> None:
        self._move(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move(self.cursor + direction * max(1, self._body_height()))

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            self._move(int(self.scroll_y) + event.y - 1)
            if event.chain == 2:
                self.action_select()

    def _move(self, row: int) -> None:
        """Cursor to ``row`` (clamped), scrolled into view."""
        before = self.cursor
        self.cursor = max(0, min(row, self.row_count - 1))
        if self.cursor != before:
            self._moved()
        top, height = int(self.scroll_y), self._body_height()
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif height > 0 and self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)
        else:
            # Only the two rows the cursor left and reached change: repaint those lines
            # (line 0 is the header), not the whole table; none when it stayed (a resize,
            # whose repaint would be one more frame after the one that drew the new size).
            if self.cursor != before:
                self.refresh_lines(before + 1)
                self.refresh_lines(self.cursor + 1)
            return
        self.refresh()

    def _body_height(self) -> int:
        return max(0, self.scrollable_content_region.height - 1)
