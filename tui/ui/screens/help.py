"""The ``?`` screen: every key of the current screen, and how to read it.

The key list is built from the live bindings, so it cannot drift from what
the keys actually do.
"""

from __future__ import annotations

import textwrap

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

PANEL_GUIDE = (
    "The header: the run, its step of the total, s/it, ETA, how long ago the last step "
    "came, and the verdict of the health rules (w opens what it names: a crash's "
    "traceback, a stall's evidence, else the worst finding's step; h opens why a stalled or "
    "overdue run prints no new step, each item with where it was read). Each panel: the latest value, its change "
    "since the previous point (Δ), the run's min and max, and the whole run, one column per "
    "bucket of steps with every spike kept: a sparkline, or where the panel has room a line "
    "chart with the value at its top, middle and bottom row and the steps under it. A "
    "validation panel of a run scored on several data sets draws a line per set, named with "
    "its latest score above the chart. The metric key it reads is at "
    "the bottom right, with @step when that value is older than the newest step "
    "(validation runs every few steps). A panel whose metric breaks a rule now is titled "
    "with the state in words."
)


# The help box's text width: its 64 columns less border and padding.
HELP_TEXT_WIDTH = 58


class HelpScreen(ModalScreen[None]):
    """A modal list of the keys; escape (or ? again) closes it."""

    BINDINGS = [
        Binding("escape", "dismiss", "Close", tooltip="close this help"),
        Binding("question_mark", "dismiss", "Close", show=False),
    ]

    DEFAULT_CSS = """
    /* Opaque: a see-through modal makes Textual re-blend every cell of the
       dashboard behind it on each frame (hundreds of ms with eight colour
       sparklines), the cost of a keypress. */
    HelpScreen {
        align: center middle;
        background: $background;
    }
    HelpScreen > VerticalScroll {
        width: 64;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        padding: 1 2;
        border: round $primary;
        background: $surface;
    }
    HelpScreen #keys {
        margin-bottom: 1;
    }
    HelpScreen #guide {
        color: $text-muted;
    }
    """

    def __init__(self, bindings: list[Binding], guide: str | None = None) -> None:
        """``bindings``: the screen's active ones; ``guide``: how to read that screen."""
        super().__init__()
        self.bindings = bindings
        self.guide = guide

    def compose(self) -> ComposeResult:
        # Scrolls (arrows, page keys) where the screen is shorter than the help: at 80×24
        # the dashboard's guide used to stop mid-sentence.
        with VerticalScroll() as box:
            box.border_title = "rlwatch keys"
            box.border_subtitle = "esc close  ↑↓ scroll"
            yield Static(self._key_table(), id="keys")
            guide = Static(Content(self.guide or ""), id="guide")
            guide.display = bool(self.guide)
            yield guide

    def show(self, bindings: list[Binding], guide: str | None = None) -> None:
        """List these keys and this guide: the app keeps one help screen and shows it for
        each screen in turn (composing it anew was most of what ``?`` cost), from the top."""
        if not self.is_mounted:
            self.bindings, self.guide = bindings, guide
            return
        if (bindings, guide) != (self.bindings, self.guide):
            self.bindings, self.guide = bindings, guide
            self.query_one("#keys", Static).update(self._key_table())
            text = self.query_one("#guide", Static)
            text.update(Content(guide or ""))
            text.display = bool(guide)
        self.query_one(VerticalScroll).scroll_home(animate=False)

    def _key_table(self) -> Content:
        """A row per action with all its keys ("k/↑"); keys hidden from the footer
        are listed too when their tooltip says what they do."""
        grouped: dict[tuple[str, str], list[str]] = {}
        for binding in [*self.bindings, *self.BINDINGS]:
            if isinstance(binding, Binding) and (binding.show or binding.tooltip):
                keys = grouped.setdefault((binding.action, binding.tooltip or binding.description), [])
                display = self.app.get_key_display(binding)
                if display not in keys:
                    keys.append(display)
        rows = [("/".join(keys), description) for (_, description), keys in grouped.items()]
        width = max(len(key) for key, _ in rows)
        # Descriptions wrap under themselves, not under the keys.
        room = max(20, HELP_TEXT_WIDTH - width - 3)
        lines = []
        for key, description in rows:
            wrapped = textwrap.wrap(description, room) or [""]
            lines.append(Content.assemble((key.ljust(width), "bold $accent"), "   ", wrapped[0]))
            lines.extend(Content(" " * (width + 3) + more) for more in wrapped[1:])
        return Content("\n").join(lines)
