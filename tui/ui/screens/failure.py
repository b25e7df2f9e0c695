"""Where a failure happened: the log at its byte offset, the whole traceback, its exception marked.

A crash after the last step lies outside every step's Log tab, and the
findings row can only name it; this screen is what ``enter`` on a crash or
error finding (and ``w`` on the dashboard) opens. Its first row says what it
shows — which failure, after which step, where in the log — so a user who
lands here from a tmux pane glance knows where they are before reading.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from tui.parsers.text import safe_text
from tui.rules.findings import Finding, Severity
from tui.sources.base import SourceError
from tui.ui.health import STATE_MARK
from tui.ui.messages import RunUpdated
from tui.ui.run_context import run_context
from tui.ui.screens.py_spy import PySpyScreen
from tui.ui.widgets.failure_text import FailureText
from tui.ui.widgets.key_bar import KeyBar


class FailureScreen(Screen[None]):
    """The failure block of ``finding`` (which has an ``offset``), read from the run's source."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", tooltip="back to the previous screen"),
        Binding("o", "open_step", "Its step", tooltip="the step the failure followed"),
        Binding("x", "jump_exception", "Exception", tooltip="scroll back to the exception line"),
        Binding("y", "py_spy", "py-spy", tooltip="the trainer's Python stacks now, by the py-spy "
                "already on its box (rlwatch installs nothing)"),
    ]
    GUIDE = (
        "The log's text from the byte where the failure's block starts, read through the "
        "run's source (local or over SSH). Process prefixes such as (TaskRunner pid=12) are "
        "taken off; lines of other processes printed in between are dimmed. The line that "
        "says what failed is marked ▶. y: a py-spy dump of the trainer's Python stacks, where "
        "py-spy is already installed on its box (rlwatch never installs it)."
    )
    DEFAULT_CSS = """
    FailureScreen #title { padding: 0 1; background: $panel; height: 2; text-wrap: nowrap;
                           text-overflow: ellipsis; }
    """

    def __init__(self, finding: Finding) -> None:
        super().__init__()
        self.finding = finding
        self._block_known = False

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="title")
        yield FailureText()
        yield KeyBar()

    def _title(self) -> Content:
        finding = self.finding
        model = run_context(self).model
        style = "bold $error" if finding.severity == Severity.CRITICAL else "bold $warning"
        where = ("before the first step" if finding.last_step is None
                 else f"after step {finding.last_step}"
                 + (f" of {model.last_step}" if model.last_step is not None else ""))
        head = Content.assemble((STATE_MARK[finding.severity], style), " ",
                                ("crash" if finding.rule == "crash" else finding.rule, "bold"),
                                f"  {where}  byte {finding.offset:,}")
        exception = Content.styled(safe_text(finding.exception or finding.message), style)
        return Content("\n").join([head, exception])

    def on_mount(self) -> None:
        self._read()
        self.query_one(FailureText).focus()

    def _read(self) -> None:
        """Read the block; where the rules have not read it yet (a crash seen a moment ago
        is named by its marker line first), a screenful from its start, read again once
        the block is known (``on_run_updated``)."""
        model = run_context(self).model
        offset = self.finding.offset
        assert offset is not None
        block = model.crash_blocks.get(offset)
        self._block_known = block is not None
        text = self.query_one(FailureText)
        self.run_worker(text.show_block(
            run_context(self).source, offset, block.end if block else None,
            block.exception_offset if block else None,
            self.finding.exception or "", block.process if block else ""), exclusive=True)

    def on_run_updated(self, _: RunUpdated) -> None:
        if self._block_known or self.finding.offset not in run_context(self).model.crash_blocks:
            return
        latest = next((f for f in run_context(self).findings
                       if f.rule == self.finding.rule and f.offset == self.finding.offset), None)
        if latest is not None:
            self.finding = latest
        self.query_one("#title", Static).update(self._title())
        self._read()

    def action_open_step(self) -> None:
        if self.finding.last_step is not None:
            run_context(self).open_step(self.finding.last_step)
        else:
            self.notify("This failure came before the first step.", severity="warning")

    def action_jump_exception(self) -> None:
        self.query_one(FailureText).show_exception()

    def action_py_spy(self) -> None:
        self.notify("Asking py-spy for the trainer's stacks…")
        self.run_worker(self._py_spy(), group="py-spy", exclusive=True)

    async def _py_spy(self) -> None:
        """The dump in a screen of its own, or why there is none in a notice."""
        try:
            title, dump = await run_context(self).session.py_spy_dump()
        except SourceError as error:
            self.notify(safe_text(str(error)), severity="warning", markup=False)
            return
        self.app.push_screen(PySpyScreen(title, dump))
