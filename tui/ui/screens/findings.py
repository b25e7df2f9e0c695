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
from tui.ui.health import STATE_MARK
from tui.ui.widgets.key_bar import KeyBar


class FindingsScreen(Screen[None]):
    """A table of grouped findings; escape goes back to the dashboard."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", tooltip="back to the dashboard")]
    DEFAULT_CSS = """
    FindingsScreen #title { padding: 0 1; background: $panel; }
    FindingsScreen DataTable { height: 1fr; }
    FindingsScreen #detail { height: auto; max-height: 6; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__()
        self.findings = sorted(findings, key=lambda f: (f.last_step is not None, f.last_step or 0,
                                                        f.severity == Severity.CRITICAL), reverse=True)

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(("Findings", "bold"), f"  {len(self.findings)} — newest first; "
                                      "repeated hits of a rule are one row"), id="title")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Static(id="detail")
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("state", "rule", "metric", "steps", "count", "latest")
        for finding in self.findings:
            steps = ("" if finding.first_step is None else f"{finding.first_step}"
                     if finding.first_step == finding.last_step
                     else f"{finding.first_step}–{finding.last_step}")
            # rich Text cells: DataTable sizes its columns from them (log text stays literal).
            style = "bold red" if finding.severity == Severity.CRITICAL else "yellow"
            # safe_text: a metric key or a crash line may hold escape sequences; shown, inert.
            table.add_row(Text(STATE_MARK[finding.severity], style=style), Text(safe_text(finding.rule)),
                          Text(safe_text(finding.metric or "")), steps, str(finding.count),
                          Text(safe_text(finding.exception or finding.reason or finding.message[:60])))
        if not self.findings:
            self.query_one("#detail", Static).update(Content("No findings: every rule holds."))
        table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.findings):
            self.query_one("#detail", Static).update(
                Content(safe_text(self.findings[event.cursor_row].message)))
