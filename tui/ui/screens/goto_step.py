"""The ``g`` prompt: a step number to jump to, asked for in a small modal box."""

from __future__ import annotations

from collections.abc import Sequence
from bisect import bisect_right

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input


def landing_step(steps: Sequence[int], step: int) -> int | None:
    """Where a jump to ``step`` lands among ``steps`` (ascending): the step itself when
    logged, else the newest one before it, else the first (None when there are none)."""
    if not steps:
        return None
    return steps[max(0, bisect_right(steps, step) - 1)]


class GoToStepScreen(ModalScreen[int | None]):
    """Asks for a step number; dismisses with it, or with None on escape."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", tooltip="close without jumping")]
    DEFAULT_CSS = """
    GoToStepScreen {
        align: center middle;
    }
    GoToStepScreen > Vertical {
        width: 32;
        height: auto;
        padding: 0 1;
        border: round $primary;
        background: $surface;
    }
    """

    def __init__(self, last_step: int | None) -> None:
        super().__init__()
        self.last_step = last_step

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "go to step"
            hint = f"0–{self.last_step}" if self.last_step is not None else "step"
            yield Input(placeholder=hint, type="integer")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(int(text) if text.lstrip("-").isdigit() else None)
