"""The log around one line, by byte offset: where an item of the "why is it stuck" view was read.

A stalled run's lines since its last step belong to no step (the step never printed its
line), so no step's Log tab holds them. This screen shows them as the failure view does (the
same :class:`~tui.ui.widgets.failure_text.FailureText`: read by byte range through the run's
source, local or over SSH, process prefixes off), the chosen line marked ▶ and scrolled to.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen

from tui.parsers.text import safe_text
from tui.ui.run_context import run_context
from tui.ui.widgets.failure_text import FailureText
from tui.ui.widgets.key_bar import KeyBar
from tui.ui.widgets.title_bar import TitleBar

# The text before the line is shown from where it starts (the last step line's end) when
# that is at most this far back; else from the line itself.
CONTEXT_BYTES = 64 * 1024


class LogAtScreen(Screen[None]):
    """The log from ``start`` (a line's start) on, the line at ``offset`` marked."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", tooltip="back to the previous screen"),
        Binding("x", "jump_line", "The line", tooltip="scroll back to the marked line"),
    ]
    GUIDE = ("The log's text read by byte range through the run's source, from the end of the "
             "last step line; the line the item came from is marked ▶. Process prefixes such as "
             "(TaskRunner pid=12) are taken off.")
    DEFAULT_CSS = """
    LogAtScreen #title { background: $panel; }
    """

    def __init__(self, start: int, offset: int | None, line: str, what: str) -> None:
        super().__init__()
        self.line_start = start if offset is None or offset - start <= CONTEXT_BYTES else offset
        self.line_offset, self.line, self.what = offset, line, what

    def compose(self) -> ComposeResult:
        at = (f"byte {self.line_offset:,}" if self.line_offset is not None
              else f"from byte {self.line_start:,}")
        yield TitleBar(Content.assemble(("Log", "bold"), f"  {at}: ", safe_text(self.what)))
        yield FailureText("reading the log…")
        yield KeyBar()

    def on_mount(self) -> None:
        text = self.query_one(FailureText)
        end = max(run_context(self).model.read_to, (self.line_offset or self.line_start) + 1)
        self.run_worker(text.show_block(run_context(self).source, self.line_start, end, self.line_offset,
                                        self.line, ""), exclusive=True)
        text.focus()

    def action_jump_line(self) -> None:
        self.query_one(FailureText).show_exception()
