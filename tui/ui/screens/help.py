"""The ``?`` screen: every key, and how to read a panel.

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
    HelpScreen {
        align: center middle;
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

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__()
        self.bindings = bindings

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "rlwatch keys"
            yield Static(self._key_table(), id="keys")
            yield Static(PANEL_GUIDE, id="guide", markup=False)

    def _key_table(self) -> Content:
        rows = [(self.app.get_key_display(binding), binding.tooltip or binding.description)
                for binding in [*self.bindings, *self.BINDINGS] if binding.show]
        width = max(len(key) for key, _ in rows)
        return Content("\n").join(
            Content.assemble((key.ljust(width), "bold $accent"), "   ", description)
            for key, description in rows)
