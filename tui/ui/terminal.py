"""What rlwatch adds to Textual's terminal driver: the window title and ASCII output.

Both have to happen where bytes leave for the terminal. Textual writes no
title of its own, and only the driver sees every character drawn (rlwatch's
widgets, Textual's footer and scrollbars, text from the log), which is what
ASCII mode must translate. The driver class Textual picks for the platform
is extended, not replaced, so Textual's own choice (and ``TEXTUAL_DRIVER``)
still holds.
"""

from __future__ import annotations

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


def rlwatch_driver(base: type[Driver], ascii_only: bool) -> type[Driver]:
    """``base`` (Textual's driver for this platform) with titles, and ASCII output if asked."""
    return type(f"Rlwatch{base.__name__}", (TerminalExtras, base), {"ascii_only": ascii_only})
