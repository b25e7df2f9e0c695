"""The ``f`` screen: every finding of the run, newest first, one row per rule and metric."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Static

from tui.parsers.text import safe_text
from tui.rules.findings import Finding, Severity
from tui.ui.health import MUTED_MARK, STATE_MARK, failure_words, worst_finding
from tui.ui.run_context import run_context
from tui.ui.widgets.key_bar import KeyBar
from tui.ui.widgets.title_bar import TitleBar


# The "why" cell is cut here (the line under the table holds it whole), so a crash's
# long exception line does not push the other columns off an 80-column screen.
WHY_WIDTH = 28


class FindingsScreen(Screen[None]):
    """A table of grouped findings; enter opens where one happened, escape goes back.

    The cursor starts on the worst finding (a crash, if any), so ``f`` then
    ``enter`` from the dashboard reads a crash in two keys.
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", tooltip="back to the previous screen"),
        Binding("enter", "open", "Open",
                tooltip="where the finding happened: a failure's log text, a stall's evidence, "
                        "else its latest step"),
        Binding("m", "mute", "Mute",
                tooltip="mute this rule's findings on this run (kept across restarts); m again unmutes"),
    ]
    GUIDE = (
        "One row per rule and metric, newest first; repeated hits of a rule are one row "
        "(steps: first–last, count: how many). enter on a crash or an error opens the log "
        "at the failure, with the whole traceback; on a stall, why the run is stuck (each piece "
        "of evidence with where it was read); on any other finding, the detail of its latest step. The line under the table is the highlighted finding in full. "
        "A note (· note) is said, never counted: a band the run has sat outside of for long, "
        "a condition that cleared, a rule that cannot apply. m mutes the highlighted finding's "
        "rule on this run (– muted: shown, not counted, remembered); m again unmutes it."
    )
    DEFAULT_CSS = """
    FindingsScreen DataTable { height: 1fr; }
    FindingsScreen #detail { height: auto; max-height: 6; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__()
        self.findings = self._sorted(findings)
        self._shown: list[tuple] | None = None
        # The rule just muted or unmuted: the cursor stays on it when the rows are rebuilt.
        self._toggled: str | None = None

    @staticmethod
    def _sorted(findings: list[Finding]) -> list[Finding]:
        return sorted(findings, key=lambda f: (f.last_step is not None, f.last_step or 0,
                                               f.severity == Severity.CRITICAL), reverse=True)

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Static(id="detail")
        yield KeyBar()

    def on_mount(self) -> None:
        # What matters first: the state, the rule and why it broke; the metric key, the
        # longest and the one the rule already implies, last (at 80 columns "latest" was
        # cut to "above 0.0" for a 0.03 threshold).
        self.query_one(DataTable).add_columns("state", "rule", "why (latest)", "steps", "count",
                                              "metric")
        self._fill()

    def show_findings(self, findings: list[Finding]) -> None:
        """The app keeps this screen mounted and shows it again with the latest findings:
        the rows are rebuilt only when those changed, the cursor put back on the worst."""
        self.findings = self._sorted(findings)
        if self.is_mounted:
            self._fill()

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        # The engine updates its findings in place (a band's grows, a warning becomes a note,
        # a rule is muted): what a row shows is compared, not the finding objects.
        shown = [(f.rule, f.metric, f.severity, f.muted, f.note, f.count, f.first_step, f.last_step)
                 for f in self.findings]
        if self._shown == shown:
            table.focus()
            return
        self._shown = shown
        table.clear()
        self.query_one(TitleBar).update(Content.assemble(
            ("Findings", "bold"), f"  {len(self.findings)} — newest first; "
            "repeated hits of a rule are one row"))
        for finding in self.findings:
            steps = ("" if finding.first_step is None else f"{finding.first_step}"
                     if finding.first_step == finding.last_step
                     else f"{finding.first_step}–{finding.last_step}")
            # rich Text cells: DataTable sizes its columns from them (log text stays literal).
            style = ("dim" if finding.muted or finding.severity == Severity.NOTE
                     else "bold red" if finding.severity == Severity.CRITICAL else "yellow")
            mark = MUTED_MARK if finding.muted else STATE_MARK[finding.severity]
            # safe_text: a metric key or a crash line may hold escape sequences; shown, inert.
            why = (failure_words(finding) if finding.exception
                   else finding.reason or finding.note or finding.message[:60])
            table.add_row(Text(mark, style=style), Text(safe_text(finding.rule)),
                          Text(safe_text(why[:WHY_WIDTH - 1] + "…" if len(why) > WHY_WIDTH else why)),
                          steps, str(finding.count), Text(safe_text(finding.metric or "")))
        if not self.findings:
            self.query_one("#detail", Static).update(Content("No findings: every rule holds."))
        else:
            worst = worst_finding(self.findings)
            toggled = next((f for f in self.findings if f.rule == self._toggled), None)
            kept = toggled or worst
            table.move_cursor(row=self.findings.index(kept) if kept in self.findings else 0)
        table.focus()

    def action_open(self) -> None:
        row = self.query_one(DataTable).cursor_row
        if 0 <= row < len(self.findings):
            run_context(self).open_finding(self.findings[row])

    def action_mute(self) -> None:
        row = self.query_one(DataTable).cursor_row
        if 0 <= row < len(self.findings):
            self._toggled = self.findings[row].rule
            run_context(self).toggle_mute(self._toggled)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.findings):
            self.query_one("#detail", Static).update(
                Content(safe_text(self.findings[event.cursor_row].said())))
