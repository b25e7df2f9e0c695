"""The raw log text of one step, fetched by byte range when the step is opened.

The text between the previous step line and this one holds what the step
printed: reward-manager samples, warnings, tracebacks. It is read through
the source (a local file or, over SSH, a few kilobytes of a remote one),
never by path, and a huge step is read and drawn only at its two ends.
The last step of a run that crashed shows more: the text after its own line
up to the crash, and the crash's block with its exception line marked, as
the failure view (``w``) shows it. The crash happened while the next step
ran, a step that never printed its line, so this is where a user reading
the last step looks for it.

Everything shown is log text: colour codes are removed, every other control
character and escape sequence is shown in ``safe_text``'s visible form
(``␛]0;title␇``), never obeyed, and the rest is drawn literally, never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.parsers.records import Sample
from tui.parsers.samples import parse_samples
from tui.parsers.text import decode, safe_text
from tui.rules.findings import Finding
from tui.sources.base import LogSource, SourceError
from tui.ui.health import worst_finding
from tui.ui.run_context import run_context
from tui.ui.widgets.failure_text import FailureText
from tui.ui.widgets.sample_card import SampleCard

# A step's text up to this size is shown whole; a bigger one (a verbose reward
# function printing every sample) as its first and last ENDS_BYTES, with a note.
WHOLE_BYTES = 96 * 1024
ENDS_BYTES = 32 * 1024


@dataclass(frozen=True, slots=True)
class StepText:
    """What was read of a step: its start (and its end, when the middle was skipped)."""

    head: str
    tail: str | None = None
    skipped: int = 0


async def read_step_text(source: LogSource, start: int, end: int) -> StepText:
    """The step's text, whole when small, else its two ends (two range reads, no more)."""
    if end - start <= WHOLE_BYTES:
        return StepText(_terminal_text(await source.read_range(start, end)))
    head = await source.read_range(start, start + ENDS_BYTES)
    tail = await source.read_range(end - ENDS_BYTES, end)
    return StepText(_terminal_text(head), _terminal_text(tail), end - start - 2 * ENDS_BYTES)


def _terminal_text(raw: bytes) -> str:
    """The text as a terminal would have shown it, safely: of a line redrawn with
    carriage returns (a tqdm bar) only its last drawing; no colour codes; every other
    control character shown, inert (:func:`safe_text`)."""
    lines = []
    for line in decode(raw).split("\n"):
        drawings = [part for part in line.split("\r") if part.strip()]
        lines.append(drawings[-1] if drawings else "")
    return safe_text("\n".join(lines), multiline=True, tabsize=4)


class StepLog(VerticalScroll):
    """The step's printed samples as cards, then its text, literally."""

    DEFAULT_CSS = """
    StepLog { padding: 0 1; }
    StepLog > #log-note { color: $text-muted; }
    StepLog > #log-body { height: auto; }
    StepLog .skipped { color: $warning; text-style: italic; margin: 1 0; }
    StepLog .after-step { color: $error; text-style: bold; margin: 1 0 0 0; }
    StepLog FailureText { height: auto; padding: 0; }
    """

    def compose(self) -> ComposeResult:
        yield Static(Content("reading the step's text…"), id="log-note")
        yield Vertical(id="log-body")

    async def show_step(self, source: LogSource, span: tuple[int, int] | None, origin: str) -> None:
        """Read and draw the text in ``span``; ``origin`` names where the values of a
        step without a log line came from (TensorBoard events, say; empty: nowhere)."""
        body = self.query_one("#log-body", Vertical)
        await body.remove_children()
        note = self.query_one("#log-note", Static)
        note.update(Content("reading the step's text…"))
        if span is None:
            note.update(Content(f"No log text: this step's values came from the {origin}."
                                if origin else "This step is not in the run."))
            return
        start, end = span
        try:
            text = await read_step_text(source, start, end)
        except (OSError, SourceError) as error:
            note.update(Content.styled(safe_text(f"Could not read the step's text: {error}"),
                                       "$error"))
            return
        samples = parse_samples(text.head) + (parse_samples(text.tail) if text.tail else [])
        crash = self._crash_after(end)
        note.update(Content(f"bytes {start:,}–{end:,} of the log ({end - start:,} bytes)"
                            + (f"; {len(samples)} printed sample{'s' * (len(samples) != 1)}"
                               if samples else "")
                            + ("; then the crash after this step (end: jump to it)" if crash else "")))
        await body.mount_all([*self._cards(samples), *self._text_blocks(text)])
        if crash is not None:
            await self._show_crash(source, end, crash)

    def _crash_after(self, end: int) -> Finding | None:
        """The crash after the run's last step line, when ``end`` is that line's end (the
        crash lies after the text of every step, this one's included); else None."""
        model = run_context(self).model
        ends = model.step_index.ends
        if not ends or end != ends[-1]:
            return None
        return worst_finding([f for f in run_context(self).findings
                              if f.rule == "crash" and f.offset is not None and f.offset >= end])

    async def _show_crash(self, source: LogSource, end: int, crash: Finding) -> None:
        """The text from this step's line to the crash, then the crash's block read as the
        failure view reads it (prefixes off, the exception line marked)."""
        offset = crash.offset
        assert offset is not None
        body = self.query_one("#log-body", Vertical)
        # The exception itself is the block's marked line, below.
        heading = Static(Content(f"After this step's line: the text up to the crash at byte "
                                 f"{offset:,}, then the crash"), classes="after-step")
        try:
            between = await read_step_text(source, end, offset)
        except (OSError, SourceError) as error:
            await body.mount(heading, Static(Content.styled(
                safe_text(f"Could not read the log after this step: {error}"), "$error")))
            return
        block = run_context(self).model.crash_blocks.get(offset)
        failure = FailureText()
        failure.can_focus = False  # the step's log scrolls as one; its block does not
        text = self._text_blocks(between) if between.head.strip() else []
        await body.mount_all([heading, *text, failure])
        await failure.show_block(source, offset, block.end if block else None,
                                 block.exception_offset if block else None,
                                 crash.exception or "", block.process if block else "")

    @staticmethod
    def _cards(samples: list[Sample]) -> list[SampleCard]:
        return [SampleCard(sample, f"printed sample {number}")
                for number, sample in enumerate(samples, 1)]

    @staticmethod
    def _text_blocks(text: StepText) -> list[Static]:
        blocks = [Static(Content(text.head), classes="text")]
        if text.tail is not None:
            blocks += [Static(Content(f"… {text.skipped:,} bytes of this step not shown: "
                                      f"the first and last {ENDS_BYTES // 1024} KB are …"),
                              classes="skipped"),
                       Static(Content(text.tail), classes="text")]
        return blocks
