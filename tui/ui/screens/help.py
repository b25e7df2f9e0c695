"""The ``?`` screen: every key of the current screen, and how to read it.

The key list is built from the live bindings, so it cannot drift from what
the keys actually do.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

PANEL_GUIDE = (
    "Each panel: the latest value, its change since the previous point (Δ), "
    "the run's min and max, and a sparkline of the whole run, one column per "
    "bucket of steps with every spike kept. The metric key it reads is at the "
    "bottom right, with @step when that value is older than the newest step "
    "(validation runs every few steps)."
)


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
    HelpScreen > Vertical {
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
        with Vertical() as box:
            box.border_title = "rlwatch keys"
            yield Static(self._key_table(), id="keys")
            if self.guide:
                yield Static(Content(self.guide), id="guide")

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
        return Content("\n").join(
            Content.assemble((key.ljust(width), "bold $accent"), "   ", description)
            for key, description in rows)
