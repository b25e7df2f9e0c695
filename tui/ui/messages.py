"""The messages rlwatch's own widgets and screens exchange, in one place (as toolong keeps them)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.message import Message

from tui.session.run_session import RunSession


class RunUpdated(Message):
    """The shown run changed (steps, values, findings or accelerator readings) and the
    dashboard has been redrawn: every screen on the stack brings itself up to date.

    Sent by the app after each redraw, which it schedules when the session says
    something changed, so a screen never polls the model on a timer of its own.
    """


class CompareRuns(Message):
    """Compare these runs (the fleet view's marked rows): the app opens the compare
    screen on them. The sessions are the sender's, already connected and followed."""

    def __init__(self, sessions: Sequence[RunSession]) -> None:
        super().__init__()
        self.sessions = list(sessions)
