"""What the drill-down screens read from the running app, named in one place.

The screens take from the app the live run (model, findings, rules, source)
and ask it to open other screens; typing that as a Protocol keeps them free
of an import of the app (which imports them) and says exactly what they use.
"""

from __future__ import annotations

from typing import Protocol, cast

from textual.dom import DOMNode

from tui.model.run_model import RunModel
from tui.rules.engine import RuleEngine
from tui.rules.findings import Finding
from tui.session.run_session import RunSession
from tui.sources.base import LogSource
from tui.sources.run_folder import RunFolder


class RunContext(Protocol):
    """The parts of RlwatchApp that the steps, step detail and chart screens use."""

    model: RunModel
    session: RunSession  # the run's session: what reads the box on demand (py-spy)
    findings: list[Finding]
    engine: RuleEngine
    source: LogSource
    folder: RunFolder | None  # the run's other files (dumps), None where it has no place
    short_name: str  # the run's short name, as the terminal title shows it

    def open_step(self, step: int) -> None:
        """Show the detail of ``step``."""

    def open_chart(self, key: str, step: int | None = None) -> None:
        """Chart the metric ``key`` over the whole run, the cursor on ``step``."""

    def open_finding(self, finding: Finding) -> None:
        """Show where ``finding`` happened: a failure's log text, else its latest step."""

    def open_why_stuck(self) -> None:
        """Show why the run prints no new step (the stall's evidence), or that it moves."""

    def toggle_mute(self, rule: str) -> None:
        """Mute ``rule``'s findings on this run, or unmute them, kept across restarts."""


def run_context(node: DOMNode) -> RunContext:
    """The running app, as the screens see it."""
    return cast(RunContext, node.app)
