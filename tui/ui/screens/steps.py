"""The ``s`` screen: every step of the run, newest first, following live."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input

from tui.parsers.text import safe_text
from tui.ui.messages import RunUpdated
from tui.ui.run_context import run_context
from tui.ui.screens.goto_step import GoToStepScreen
from tui.ui.step_filter import parse_query
from tui.ui.widgets.key_bar import KeyBar
from tui.ui.widgets.title_bar import TitleBar
from tui.ui.widgets.step_table import StepTable


class FilterInput(Input):
    """The ``/`` line: words that say which steps to keep (``tui.ui.step_filter``)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", tooltip="leave the filter as it was")]
    DEFAULT_CSS = """
    FilterInput { dock: bottom; display: none; }
    FilterInput.-open { display: block; }
    """

    def action_cancel(self) -> None:
        self.remove_class("-open")
        self.screen.query_one(StepTable).focus()


class StepsScreen(Screen[None]):
    """One row per step; enter opens it, ``g`` jumps, ``/`` filters."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", tooltip="back to the previous screen"),
        Binding("g", "go_to", "Go to step", tooltip="ask for a step number and jump there"),
        Binding("slash", "filter", "Filter", key_display="/",
                tooltip="keep some steps: crit, warn, ok, rule:ID, metric:KEY, 100-200, or text"),
    ]
    GUIDE = (
        "One row per step the log reported, newest on top; at the top row the cursor "
        "follows new steps. The rules column names the worst rule the step broke "
        "(+N: how many more). An empty cell: the step did not log that metric. / keeps "
        "some steps: crit, warn or ok; rule:ID; metric:KEY; a range 100-200; or any text "
        "(a value such as nan). Words of one kind widen, of two kinds narrow."
    )
    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield StepTable(run_context(self).model, on_move=self._cursor_moved)
        yield FilterInput(placeholder="filter: crit warn ok rule:ID metric:KEY 100-200 text (empty: all)")
        yield KeyBar()

    def on_mount(self) -> None:
        self._sync()
        self.query_one(StepTable).focus()

    def on_screen_resume(self) -> None:
        """The app keeps this screen mounted between visits (composing a table, a filter
        line and the bars anew cost most of what ``s`` took): catch up at once."""
        self._sync()

    def on_run_updated(self, _: RunUpdated) -> None:
        """New steps or findings: a check of two numbers when nothing the table shows changed."""
        self._sync()

    def _sync(self, query: str | None = None) -> None:
        table = self.query_one(StepTable)
        table.sync(run_context(self).findings, query)
        total = run_context(self).model.step_count
        self._show_title(table, total)

    def _show_title(self, table: StepTable, total: int) -> None:
        """Say what is listed and whether the cursor follows new steps (it does on the
        top row only: anywhere else it stays on its step while rows arrive above)."""
        if table.query_text.strip():
            what = Content.assemble(f"{table.row_count} of {total} — filter ",
                                    (table.query_text, "bold"))
        else:
            what = Content(f"{total} — newest first")
        if table.following:
            state = Content.styled("following new steps", "$success")
        else:
            state = Content.styled(f"on step {table.cursor_step} — home: follow new steps",
                                   "$warning")
        self.query_one(TitleBar).update(
            Content.assemble(("Steps", "bold"), "  ", what, "  ", state))

    def _cursor_moved(self) -> None:
        self._show_title(self.query_one(StepTable), run_context(self).model.step_count)

    def action_go_to(self) -> None:
        self.app.push_screen(GoToStepScreen(run_context(self).model.last_step), self._go_to)

    def _go_to(self, step: int | None) -> None:
        if step is not None:
            self.query_one(StepTable).jump_to(step)

    def action_filter(self) -> None:
        line = self.query_one(FilterInput)
        line.value = self.query_one(StepTable).query_text
        line.add_class("-open")
        line.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(FilterInput).remove_class("-open")
        unknown = parse_query(event.value).problems
        if unknown:
            self.notify(safe_text(f"{' '.join(unknown)}: a severity is crit, warn or ok; left out"),
                        severity="warning", markup=False)
        self._sync(event.value)
        self.query_one(StepTable).focus()

    def on_step_table_selected(self, event: StepTable.Selected) -> None:
        run_context(self).open_step(event.step)
