"""The application ``rlwatch compare A B …`` runs: the compare screen on runs followed live.

Thin on purpose: it follows each session in a worker (the logs backfill, then
tail), judges them every few seconds (the title says which stalled), and shows
one screen, which redraws itself when a run changed. The
dashboard's app (``RlwatchApp``) opens the same screen for the fleet view's
marked runs (``CompareRuns``).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import App
from textual.binding import Binding
from textual.driver import Driver

from tui.parsers.text import safe_text
from tui.session.run_session import RunSession
from tui.ui.app import JUDGE_BUDGET_SECONDS, JUDGE_IDLE_SECONDS
from tui.ui.appearance import Appearance
from tui.ui.messages import RunUpdated
from tui.ui.screens.compare import CompareScreen
from tui.ui.terminal import rlwatch_driver


class CompareApp(App[None]):
    """The compare screen on ``sessions``; leaving it (escape, q) quits."""

    TITLE = "rlwatch compare"
    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="quit rlwatch (the runs themselves are not touched)"),
    ]

    def __init__(self, sessions: Sequence[RunSession], *, appearance: Appearance | None = None) -> None:
        self.appearance = appearance or Appearance()  # before Textual asks for the driver
        super().__init__()
        self.sessions = list(sessions)
        self.screen_shown = CompareScreen(self.sessions)

    def get_driver_class(self) -> type[Driver]:
        return rlwatch_driver(super().get_driver_class(), self.appearance.ascii)

    def on_mount(self) -> None:
        for theme in self.appearance.themes:
            self.register_theme(theme)
        self.theme = self.appearance.theme
        for problem in self.appearance.problems:
            self.notify(safe_text(problem), severity="warning", timeout=15, markup=False)
        self.push_screen(self.screen_shown, lambda _: self.exit())
        for index, session in enumerate(self.sessions):
            self.run_worker(session.follow(), name=f"session-{index}", group="sessions")
        # The rules judge each run now and then, so the title can say one stalled.
        self.set_interval(JUDGE_IDLE_SECONDS, self._judge_all)

    def _judge_all(self) -> None:
        before = [session.findings for session in self.sessions]
        for session in self.sessions:
            session.judge(budget_s=JUDGE_BUDGET_SECONDS)
        if [session.findings for session in self.sessions] != before:
            self.screen_shown.post_message(RunUpdated())
