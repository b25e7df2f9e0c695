"""The bottom line of every screen: the keys it answers to, in the footer's colours.

Textual's ``Footer`` is a container of one widget per key, composed anew
whenever the screen's bindings change, which they do each time a screen
comes back to the front: on this 2-core machine that recompose was half of
what pressing ``?`` and closing the help cost with the dashboard behind it
(about 80 ms of 150). This bar is one widget that draws the same line and is
only repainted, and only when what it shows changed: Textual announces new
bindings on every focus change, and again once the frame after it is drawn,
and each repaint of an unchanged bar was one more frame written after the
key's own (about 25 ms later: the next tick of the screen's update timer).
"""

from __future__ import annotations

from textual import events
from textual.app import RenderResult
from textual.binding import Binding
from textual.content import Content
from textual.widget import Widget


# The key that lists every key of a screen: always on the bar.
HELP_KEY = "question_mark"


class KeyBar(Widget, can_focus=False):
    """One row: `` key description `` for each shown binding of the screen, the command
    palette's key at the right. Clicking a key presses it."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"key-bar--key", "key-bar--description", "key-bar--disabled"}
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        width: 1fr;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        text-overflow: clip;
        .key-bar--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .key-bar--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .key-bar--disabled {
            text-style: dim;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__()
        # (first column, last column + 1, key) of each item drawn, for clicks.
        self._spans: list[tuple[int, int, str]] = []
        # What the bar last drew (each shown item's key, its display, words and state).
        self._drawn: tuple | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen) -> None:
        if screen is self.screen and self._signature(self._items()) != self._drawn:
            self.refresh()

    def _signature(self, items: list[tuple[Binding, bool]]) -> tuple:
        return tuple((binding.key, self.app.get_key_display(binding), binding.description, enabled)
                     for binding, enabled in items)

    def render(self) -> RenderResult:
        palette = self.app.COMMAND_PALETTE_BINDING
        items = self._items()
        self._drawn = self._signature(items)
        left = [(binding.key, self._item(binding, enabled)) for binding, enabled in items
                if binding.key != palette]
        right = [(binding.key, self._item(binding, enabled)) for binding, enabled in items
                 if binding.key == palette]
        left, right = self._fit(left, right, self.size.width)
        used = sum(part.cell_length for _, part in left + right)
        row = [*left, ("", Content(" " * max(0, self.size.width - used))), *right]
        self._spans = []
        column = 0
        for key, part in row:
            if key:
                self._spans.append((column, column + part.cell_length, key))
            column += part.cell_length
        return Content("").join(part for _, part in row)

    @staticmethod
    def _fit(left: list[tuple[str, Content]], right: list[tuple[str, Content]],
             width: int) -> tuple[list[tuple[str, Content]], list[tuple[str, Content]]]:
        """Whole items only, never one cut mid-word (``d Dum``): the palette's hint goes
        first, then the keys from the end of the row (the app's, after the screen's own),
        while ``?`` stays, since help lists every key of the screen."""
        def length(items: list[tuple[str, Content]]) -> int:
            return sum(part.cell_length for _, part in items)

        if not width or length(left) + length(right) <= width:
            return left, right
        right = []
        help_item = [item for item in left if item[0] == HELP_KEY]
        kept: list[tuple[str, Content]] = []
        room = width - length(help_item)
        for item in left:
            if item[0] == HELP_KEY:
                kept.append(item)
            elif item[1].cell_length <= room:
                kept.append(item)
                room -= item[1].cell_length
            else:
                room = 0  # keep the order: nothing after a dropped key
        return kept, right

    def _items(self) -> list[tuple[Binding, bool]]:
        """The shown bindings of the screen, the first of each action, in order."""
        seen: set[str] = set()
        items = []
        for _, binding, enabled, _ in self.screen.active_bindings.values():
            if binding.show and binding.action not in seen:
                seen.add(binding.action)
                items.append((binding, enabled))
        palette = self.app.COMMAND_PALETTE_BINDING
        if self.app.ENABLE_COMMAND_PALETTE and palette in self.screen.active_bindings:
            _, binding, enabled, _ = self.screen.active_bindings[palette]
            if binding.action not in seen:
                items.append((binding, enabled))
        return items

    def _item(self, binding: Binding, enabled: bool) -> Content:
        key_style = self.get_visual_style("key-bar--key")
        description_style = self.get_visual_style("key-bar--description")
        item = Content.assemble((f" {self.app.get_key_display(binding)} ", key_style),
                                (f"{binding.description} ", description_style))
        return item if enabled else item.stylize(self.get_visual_style("key-bar--disabled"))

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self._spans:
            if start <= event.x < end:
                self.app.simulate_key(key)
                return
