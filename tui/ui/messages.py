"""The messages rlwatch's own widgets and screens exchange, in one place (as toolong keeps them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from tui.session.run_session import RunSession


class RunUpdated(Message):
    """The shown run changed (steps, values, findings or accelerator readings) and the
    dashboard has been redrawn: every screen on the stack brings itself up to date.

    Sent by the app after each redraw, which it schedules when the session says
    something changed, so a screen never polls the model on a timer of its own.
    """


class CompareRuns(Message):
    """The user asked to compare these runs (marked on the fleet screen); whoever offers a
    compare view handles it (the app, where a compare screen is installed)."""

    def __init__(self, sessions: list[RunSession]) -> None:
        super().__init__()
        self.sessions = sessions
