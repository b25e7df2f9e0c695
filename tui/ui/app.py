"""The Textual application: a Feed in a worker, the dashboard screen, the keys.

Deliberately thin: widgets draw, screens arrange, and this class only wires
the source to the model and decides when to redraw.
"""

from __future__ import annotations

import time

from textual.app import App
from textual.binding import Binding

from tui.feed import Feed
from tui.model.run_model import RunModel
from tui.sources.base import LogSource, Reset, SourceError, Status
from tui.ui.screens.dashboard import DashboardScreen
from tui.ui.screens.help import HelpScreen
from tui.ui.themes import DEFAULT_THEME, load_themes

# Redraw at most this often: a backfill folds hundreds of chunks a second and
# drawing each would spend the time the scanner needs.
REDRAW_SECONDS = 0.1
# And wait this many times as long as the last redraw took before the next:
# on a 100k-step run a redraw costs a few hundred milliseconds, and redrawing
# back to back would slow the backfill that is still coming in.
REDRAW_BACKOFF = 4


class RlwatchApp(App[None]):
    """The dashboard on one log source (already connected by the caller)."""

    TITLE = "rlwatch"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="quit rlwatch (the run itself is not touched)"),
        Binding("question_mark", "help", "Help", key_display="?",
                tooltip="show the keys and how to read a panel"),
    ]

    def __init__(self, source: LogSource, *, label: str | None = None, note: str | None = None) -> None:
        """``label`` names the run in the header (default: the source's label);
        ``note`` is shown in the status area at start (which log was chosen)."""
        super().__init__()
        self.source = source
        self.model = RunModel(source.label)
        self.feed = Feed(source, self.model, on_change=self._model_changed,
                         on_status=self._source_event)
        self.dashboard = DashboardScreen(self.model, label or source.label)
        self.note = note
        self._dirty = False
        self._drawing = False
        self._next_redraw_at = 0.0

    def on_mount(self) -> None:
        for theme in load_themes():
            self.register_theme(theme)
        self.theme = DEFAULT_THEME
        self.push_screen(self.dashboard)
        if self.note:
            self.dashboard.show_status(self.note)
        self.set_interval(REDRAW_SECONDS, self._redraw)
        self.run_worker(self._follow(), name="feed", group="feed")

    async def _follow(self) -> None:
        try:
            await self.feed.run(follow=True)
        except SourceError as error:
            self.dashboard.show_status(str(error), "error")

    def _model_changed(self) -> None:
        self._dirty = True

    def _source_event(self, event: Status | Reset) -> None:
        if isinstance(event, Reset):
            self._dirty = True  # the model is empty now; show that before it refills
            self.dashboard.show_status(event.reason, "notice")
        else:
            self.dashboard.show_status(event.text, "ok" if event.ok else "error")

    async def _redraw(self) -> None:
        started = time.monotonic()
        if not self._dirty or self._drawing or started < self._next_redraw_at:
            return
        self._dirty, self._drawing = False, True
        try:
            await self.dashboard.show_model()
        finally:
            self._drawing = False
            self._next_redraw_at = time.monotonic() + REDRAW_BACKOFF * (time.monotonic() - started)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.BINDINGS))
