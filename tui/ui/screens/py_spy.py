"""What a ``py-spy dump`` of the trainer said: where each of its threads is now.

A hung run's log stops at the last thing it printed; its Python stacks say the line it waits
on (a lock, a socket read, a collective). py-spy reads them from outside, read-only, where it
is already installed on the box (rlwatch never installs it). Its output names files and
functions of the user's code: untrusted text, shown through ``safe_text`` as plain content,
never markup.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from tui.parsers.text import safe_text
from tui.ui.widgets.key_bar import KeyBar


class PySpyScreen(Screen[None]):
    """The dump's title (which pid, on which host, why that one) and its text."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", tooltip="back to the previous screen")]
    GUIDE = ("py-spy's dump of the trainer's Python stacks, read once on its host by the "
             "py-spy already installed there; press the key again for a new one.")
    DEFAULT_CSS = """
    PySpyScreen #title { padding: 0 1; background: $panel; height: 1; text-wrap: nowrap;
                         text-overflow: ellipsis; }
    PySpyScreen #dump { padding: 0 1; }
    """

    def __init__(self, title: str, dump: str) -> None:
        super().__init__()
        self.title_text, self.dump = title, dump

    def compose(self) -> ComposeResult:
        yield Static(Content.styled(safe_text(self.title_text), "bold"), id="title")
        with VerticalScroll():
            yield Static(Content(safe_text(self.dump, multiline=True)), id="dump")
        yield KeyBar()
