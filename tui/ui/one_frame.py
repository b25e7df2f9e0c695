"""What one key changes, drawn in one frame.

Textual draws a screen on a timer, whatever is dirty at that moment, so a key
whose effects arrive in turns is drawn in turns, each frame 20–30 ms after the
last at a real terminal. Two turns are Textual's own: a focus move
(``Screen.set_focus`` records the new widget and posts ``Blur`` and ``Focus``;
the two widgets restyle themselves, ``:focus`` rules and scroll-bar colours,
only when they take those events from their own queues) and a tab's text read
by a worker. Measured at a terminal, the panel arrows and the step detail's
tab keys cost two or three frames each. ``one_frame`` holds the screen
(``App.batch_update``) until those turns are taken, a tenth of a second at
most, then draws once: a slow read (a remote log) still shows its placeholder
and fills in when it comes. (Waiting for every widget of the screen instead
cost a wake-up of each, and a key waited behind a panel redrawing 100,000
points.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from textual.screen import Screen
from textual.widget import Widget
from textual.worker import Worker

# The longest a key's frame waits for its last turn: the focus events are taken within
# a turn or two of the event loop, a local step's text within milliseconds; more than
# this and the frame is drawn without it (a read over SSH fills in later).
HOLD_S = 0.1


class Frame:
    """The work the frame waits for (``one_frame``'s handle)."""

    def __init__(self, screen: Screen) -> None:
        self.screen = screen
        self.pending: list[asyncio.Future] = []

    def focus(self, widget: Widget) -> None:
        """Give ``widget`` the focus; the frame waits until it and the widget that had it
        have taken their Focus and Blur events (and restyled themselves)."""
        blurred = self.screen.focused
        if blurred is widget:
            return
        self.screen.set_focus(widget)
        for side in (blurred, widget):
            if side is not None and side.is_running:
                done = asyncio.get_running_loop().create_future()
                # Queued after the event just posted: runs once that was handled.
                if side.call_later(done.set_result, None):
                    self.pending.append(done)

    def wait_for(self, worker: Worker | None) -> None:
        """The frame waits for ``worker`` (what it mounts is drawn with the rest)."""
        if worker is not None:
            self.pending.append(asyncio.ensure_future(_settled(worker)))


async def _settled(worker: Worker) -> None:
    """Wait for ``worker`` to end, however it ends (its own code reports its errors)."""
    with suppress(Exception):
        await worker.wait()


@asynccontextmanager
async def one_frame(screen: Screen) -> AsyncIterator[Frame]:
    """Hold ``screen``'s drawing while the block changes it and until the work it asked
    the frame to wait for is done (``HOLD_S`` at most); then draw once."""
    frame = Frame(screen)
    with screen.app.batch_update():
        yield frame
        if frame.pending:
            await asyncio.wait(frame.pending, timeout=HOLD_S)
    screen.check_idle()  # what the batch held back is drawn now
