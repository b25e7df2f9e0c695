"""What one key changes, drawn in one frame.

Textual draws a screen on a timer, whatever is dirty at that moment, so a key
whose effects arrive in turns is drawn in turns, each frame 20–30 ms after the
last at a real terminal. Two turns are Textual's own: a focus move
(``Screen.set_focus`` records the new widget and posts ``Blur`` and ``Focus``;
the two widgets restyle themselves, ``:focus`` rules and scroll-bar colours,
only when they take those events from their own queues) and a tab's text read
by a worker. Measured at a terminal, the panel arrows and the step detail's
tab keys cost two or three frames each. ``one_frame`` holds the screen
(``App.batch_update``) until those turns are taken and every widget has sent
the screen what it asked to repaint or lay out, a tenth of a second at most,
then draws once: a slow read (a remote log) still shows its placeholder and
fills in when it comes.
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
        """Give ``widget`` the focus (the frame waits for both widgets to restyle)."""
        self.screen.set_focus(widget)

    def wait_for(self, worker: Worker | None) -> None:
        """The frame waits for ``worker`` (what it mounts is drawn with the rest)."""
        if worker is not None:
            self.pending.append(asyncio.ensure_future(_settled(worker)))


async def _settled(worker: Worker) -> None:
    """Wait for ``worker`` to end, however it ends (its own code reports its errors)."""
    with suppress(Exception):
        await worker.wait()


def _handled(screen: Screen) -> list[asyncio.Future]:
    """A future per widget of ``screen`` that is done once the widget has handled what is
    queued to it now (the Focus and Blur events; a widget sends its screen what it asked to
    repaint or lay out when its queue runs empty)."""
    loop = asyncio.get_running_loop()
    handled = []
    for node in screen.walk_children(with_self=True):
        done = loop.create_future()
        if node.is_running and node.call_later(done.set_result, None):
            handled.append(done)
    return handled


@asynccontextmanager
async def one_frame(screen: Screen) -> AsyncIterator[Frame]:
    """Hold ``screen``'s drawing while the block changes it, until the workers it named
    are done and every widget has handled what the change sent it (``HOLD_S`` at most);
    then draw once."""
    frame = Frame(screen)
    loop = asyncio.get_running_loop()
    with screen.app.batch_update():
        yield frame
        deadline = loop.time() + HOLD_S
        if frame.pending:
            await asyncio.wait(frame.pending, timeout=HOLD_S)
        handled = _handled(screen)
        if handled and (left := deadline - loop.time()) > 0:
            await asyncio.wait(handled, timeout=left)
    screen.check_idle()  # what the batch held back is drawn now
