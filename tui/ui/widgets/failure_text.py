"""A failure's whole block of log text, read by byte range, its exception line marked.

A crash is told by many lines (the traceback's frames, other ranks
interleaved, Ray's ``(WorkerDict pid=7)`` on each), but a user reads it for
one of them: the line that says what failed. The block is read through the
run's source (a local file or, over SSH, the same byte-range read a step's
Log tab makes), each line's process prefix is taken off so the frames line
up, lines of other processes are dimmed rather than dropped (they are often
the same death told by another rank), and the exception line is drawn bold
in the error colour with the view scrolled to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.parsers.text import PROCESS_PREFIX, decode, safe_text, strip_ansi
from tui.sources.base import LogSource, SourceError

# A block is read whole up to this size; a longer one (a traceback repeated
# by every rank of a big job) is read to here, which always holds the first
# exception line, and a note says the rest was not read.
MAX_BYTES = 256 * 1024
# When the block's end is unknown (its text has not been read by the rules yet),
# this much after its start is shown.
UNKNOWN_END_BYTES = 16 * 1024


@dataclass(frozen=True, slots=True)
class BlockLine:
    """One line of the block: its byte offset, its text without the process prefix,
    the prefix, and whether it is the exception line."""

    offset: int
    text: str
    process: str
    exception: bool = False


def block_lines(raw: bytes, start: int, exception_offset: int | None,
                exception: str = "") -> list[BlockLine]:
    """Split ``raw`` (the log from byte ``start``) into lines, prefixes taken off.

    The exception line is the one starting at ``exception_offset``, or, where
    that is not known, the last line whose text is ``exception``. A line
    redrawn with carriage returns (a tqdm bar written into the traceback) keeps
    its last drawing, as the terminal showed it.
    """
    lines: list[BlockLine] = []
    position = start
    for raw_line in raw.split(b"\n"):
        offset, position = position, position + len(raw_line) + 1
        drawings = [part for part in strip_ansi(decode(raw_line)).split("\r") if part.strip()]
        text = drawings[-1] if drawings else ""
        match = PROCESS_PREFIX.match(text)
        process = match.group(0).strip() if match else ""
        text = text[match.end():] if match else text
        lines.append(BlockLine(offset, text.rstrip(), process, offset == exception_offset))
    while lines and not lines[-1].text:
        lines.pop()
    if exception_offset is None and exception and not any(line.exception for line in lines):
        for at in range(len(lines) - 1, -1, -1):
            if lines[at].text.strip() == exception.strip():
                lines[at] = BlockLine(lines[at].offset, lines[at].text, lines[at].process, True)
                break
    return lines


class FailureText(VerticalScroll, can_focus=True):
    """The block's lines, the exception line a widget of its own so the view can scroll to it
    whatever the lines wrap to."""

    DEFAULT_CSS = """
    FailureText { padding: 0 1; height: 1fr; }
    FailureText > #failure-note { color: $text-muted; }
    FailureText > .failure-lines { height: auto; }
    FailureText > #failure-exception { height: auto; color: $error; text-style: bold; }
    """

    def __init__(self, reading: str = "reading the failure's text…") -> None:
        """``reading``: what the first row says until the text is read."""
        super().__init__()
        self._note = Static(Content(reading), id="failure-note")
        self._before = Static(Content(""), classes="failure-lines")
        self._exception = Static(Content(""), id="failure-exception")
        self._after = Static(Content(""), classes="failure-lines")
        self.has_exception = False

    def compose(self):
        yield self._note
        yield self._before
        yield self._exception
        yield self._after

    async def show_block(self, source: LogSource, start: int, end: int | None,
                         exception_offset: int | None, exception: str, process: str) -> None:
        """Read ``[start, end)`` (``end`` None: not known yet) and draw it.

        ``process`` is the prefix of the process that printed the failure: other
        processes' lines inside the range are dimmed.
        """
        stop = start + (UNKNOWN_END_BYTES if end is None else min(end - start, MAX_BYTES))
        if exception_offset is not None and exception_offset >= stop:
            stop = exception_offset + 4096  # the line that matters is always read
        try:
            raw = await source.read_range(start, stop)
        except (OSError, SourceError) as error:
            self._note.update(Content.styled(safe_text(f"Could not read the log: {error}"), "$error"))
            return
        lines = block_lines(raw, start, exception_offset, exception)
        note = f"bytes {start:,}–{start + len(raw):,} of the log"
        if end is not None and stop < end:
            note += f" (the block runs to {end:,}; the rest is not shown)"
        elif end is None:
            note += " (where the block ends is not known yet)"
        self._note.update(Content(note))
        at = next((number for number, line in enumerate(lines) if line.exception), None)
        self.has_exception = at is not None
        if at is None:
            self._before.update(self._draw(lines, process))
            self._exception.display = False
            return
        self._before.update(self._draw(lines[:at], process))
        self._exception.update(Content("▶ " + safe_text(lines[at].text, tabsize=4)))
        self._after.update(self._draw(lines[at + 1:], process))
        self.call_after_refresh(self.show_exception)

    def show_exception(self) -> None:
        """Scroll so the exception line sits a third of the way down the view."""
        if self.has_exception:
            top = self._exception.virtual_region.y
            self.scroll_to(y=max(0, top - self.size.height // 3), animate=False)

    @staticmethod
    def _draw(lines: list[BlockLine], process: str) -> Content:
        shown = []
        for line in lines:
            text = safe_text(line.text, tabsize=4)  # log text: shown, never obeyed
            if process and line.process and line.process != process:
                shown.append(Content.styled("  " + text, "$text-muted"))
            else:
                shown.append(Content("  " + text))
        return Content("\n").join(shown)
