"""The ``r`` screen: the end-of-run report of the run being watched (as ``rlwatch report``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from tui.ui.widgets.key_bar import KeyBar


class ReportScreen(Screen[None]):
    """Shows the report text, literally (it holds log text), in a scrollable view."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", tooltip="back to the previous screen")]
    GUIDE = (
        "The same report as rlwatch report, for the run as it stands now: the verdict, the "
        "final validation score, stability checks (PASS/FAIL with the reason), resources, "
        "every finding, curves and samples. The arrows and page keys scroll."
    )
    DEFAULT_CSS = """
    ReportScreen VerticalScroll { padding: 0 1; }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Content(self.text), id="report")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()
