"""What rlwatch adds to Textual's terminal driver: the window title and ASCII output.

Both have to happen where bytes leave for the terminal. Textual writes no
title of its own, and only the driver sees every character drawn (rlwatch's
widgets, Textual's footer and scrollbars, text from the log), which is what
ASCII mode must translate. The driver class Textual picks for the platform
is extended, not replaced, so Textual's own choice (and ``TEXTUAL_DRIVER``)
still holds.
"""

from __future__ import annotations

import os
import selectors
import threading
from codecs import getincrementaldecoder
from typing import TYPE_CHECKING

from tui.parsers.text import safe_text
from tui.ui.glyphs import to_ascii

if TYPE_CHECKING:
    from textual.driver import Driver

# xterm's title stack (tmux, xterm, kitty, foot, WezTerm…): the title the
# shell had is saved before the first one rlwatch sets, and restored on exit.
SAVE_TITLE = "\x1b[22;0t"
RESTORE_TITLE = "\x1b[23;0t"
# A title longer than this is cut: a window list has room for far less.
TITLE_CHARS = 120
# How long the input thread waits for the terminal when no escape sequence is pending
# (Textual's own figure); it checks whether it should stop between waits.
INPUT_POLL_S = 0.1


def clean_title(title: str) -> str:
    """``title`` with no control character: a run name (a log's, perhaps remote, file name)
    holding ESC or BEL must not end the sequence early and have the rest run as terminal
    commands. They are shown in :func:`safe_text`'s visible form (``␛``, ``␇``), as every
    output shows them; what else is not printable (a line separator) is dropped."""
    return "".join(char for char in safe_text(title) if char.isprintable())[:TITLE_CHARS]


class TerminalExtras:
    """Mixed into the platform's driver class by :func:`rlwatch_driver`."""

    ascii_only = False
    _title_saved = False

    def write(self, data: str) -> None:
        if self.ascii_only:
            data = to_ascii(data)
        super().write(data)  # type: ignore[misc]

    def set_title(self, title: str) -> None:
        """Set the terminal's window title (tmux: ``#T``, ``pane_title``) with OSC 2."""
        if not self._title_saved:
            self.write(SAVE_TITLE)
            self._title_saved = True
        self.write(f"\x1b]2;{clean_title(title)}\x07")

    def stop_application_mode(self) -> None:
        if self._title_saved:
            self.write(RESTORE_TITLE)
            self._title_saved = False
        super().stop_application_mode()  # type: ignore[misc]


class PromptEscape:
    """Mixed into Textual's driver for Linux and macOS: a lone ESC becomes the ``escape`` key
    as soon as ESCDELAY has passed.

    Textual's input thread waits on the terminal for 100 ms at a time and checks the
    parser's pending timeout (how it tells ESC from the start of an arrow key's
    sequence) only when that wait ends, so every ``esc`` took up to 100 ms whatever
    ESCDELAY said. This is the same loop (Textual 2.0 to 8.2 alike) with the wait cut
    short when the parser's timeout falls due.
    """

    fileno: int
    exit_event: threading.Event
    _debug: bool

    def run_input_thread(self) -> None:
        from textual._time import get_time
        from textual._xterm_parser import XTermParser

        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        try:
            while not self.exit_event.is_set():
                due = parser._timeout_time
                wait = INPUT_POLL_S if due is None else min(INPUT_POLL_S, max(0.0, due - get_time()))
                for _key, mask in selector.select(wait):
                    data = decode(os.read(self.fileno, 4096)) if mask & selectors.EVENT_READ else ""
                    for event in parser.feed(data) if data else ():
                        self.process_message(event)  # type: ignore[attr-defined]
                for event in parser.tick():
                    self.process_message(event)  # type: ignore[attr-defined]
        finally:
            selector.close()


def rlwatch_driver(base: type[Driver], ascii_only: bool) -> type[Driver]:
    """``base`` (Textual's driver for this platform) with titles, ASCII output if asked, and
    a prompt ``esc`` where it reads the terminal itself (Linux, macOS)."""
    extras = (TerminalExtras, PromptEscape) if hasattr(base, "run_input_thread") else (TerminalExtras,)
    return type(f"Rlwatch{base.__name__}", (*extras, base), {"ascii_only": ascii_only})
