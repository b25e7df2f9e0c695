"""The "why is it stuck" view: the stalled finding's evidence, one item a row, each with its source.

"No new step for 47 min" is where a hang report starts; before killing a job that costs a
node an hour, a user checks each part of the verdict: the silence against a step's time and
the stall limit, the line that names the phase (or that none does), the printed schedule,
what the phase took before, what each GPU has done since, the last lines printed. Each row
here is one of them (:func:`tui.rules.stall_explanation.explain_stall`) with, dimmed, where
it was read; ``enter`` on a log line opens the log there. Opened from the stalled finding
(``enter`` on it in the findings, ``w`` on the dashboard when it is the verdict) and by
``h`` on the dashboard; it follows the run, and says so plainly when the run moves again.

The items' sources are drawn by their ``kind`` and ``words()`` alone, so a new kind of
source needs nothing here. Log text is drawn through ``safe_text`` as rich Text, never markup.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import OptionList, Static

from tui.model.accelerators import AcceleratorHistory
from tui.parsers.text import safe_text
from tui.rules.stall_explanation import (
    MOVING,
    OVERDUE,
    STALLED,
    Evidence,
    LogLine,
    LogSpan,
    StallExplanation,
    explain_stall,
)
from tui.sources.base import SourceError
from tui.ui.messages import RunUpdated
from tui.ui.run_context import run_context
from tui.ui.screens.log_at import LogAtScreen
from tui.ui.widgets.failure_text import block_lines
from tui.ui.widgets.key_bar import KeyBar
from tui.ui.widgets.title_bar import TitleBar

# The rule kind whose parameters set the stall limit.
STALLED_KIND = "stalled"
# How much of the log's end since the last step is read for its last lines.
TAIL_BYTES = 16 * 1024
_HEADLINE_STYLE = {STALLED: "bold $error", OVERDUE: "bold $warning", MOVING: "bold $success"}


class EvidenceList(OptionList):
    """The items, one option each; ``enter`` (shown in the key bar) selects the highlighted one.
    The list's own key, not the screen's: a screen binding that must run before the list's
    hidden ``enter`` ran before a ``down`` typed just ahead of it had moved the highlight."""

    BINDINGS = [Binding("enter", "select", "Open", tooltip="the log at the highlighted item's line")]


class WhyStuckScreen(Screen[None]):
    """The evidence of a stall, item by item; escape goes back, enter opens a log line."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", tooltip="back to the previous screen"),
    ]
    GUIDE = (
        "Why the run has printed no new step, one item a row, each with where it was read "
        "(dimmed): how long since the last step against a typical step and the stall rule's "
        "limit (and which bound set it); where the step stands, by the last line since the last "
        "step that names a phase (a checkpoint save, a validation, a request retried), or "
        "unknown where none does; what the printed save_freq/test_freq have the step do; what "
        "the same phase took at earlier steps; what each GPU/NPU has done since the last step "
        "(idle, busy at flat low power: waiting in a collective, memory released: its process "
        "gone, or still computing); the log's last lines. enter on a log line opens the log "
        "there. It follows the run, and says when the run moves again."
    )
    DEFAULT_CSS = """
    WhyStuckScreen #headline { height: auto; padding: 0 1; }
    WhyStuckScreen OptionList, WhyStuckScreen OptionList:focus { height: 1fr; border: none; padding: 0 1; }
    """

    def __init__(self, accelerators: AcceleratorHistory | None = None) -> None:
        super().__init__()
        self.accelerators = accelerators
        self.clock: Callable[[], float] = time.time
        self.items: tuple[Evidence, ...] = ()
        self._shown: StallExplanation | None = None
        self._tail: tuple[tuple[int, str], ...] = ()
        self._tail_of: tuple[int, int] | None = None  # (from, to) the tail was read for

    def compose(self) -> ComposeResult:
        yield TitleBar(Content.assemble(("Why is it stuck", "bold"), "  ",
                                        safe_text(run_context(self).short_name)))
        yield Static(id="headline")
        yield EvidenceList()
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.refresh_items()

    @property
    def tail_read(self) -> bool:
        """Whether the items shown take in the log's lines since the last step (read in a
        worker after the view opens: until then the items stop before them)."""
        return self._tail_of is not None

    def on_run_updated(self, _: RunUpdated) -> None:
        self.refresh_items()

    def refresh_items(self) -> None:
        """Show the evidence as of now; the log's last lines are read again only when more
        of the log has been read (or a new step moved where they start)."""
        model = run_context(self).model
        wanted = (max(0, model.last_step_line_end), model.read_to)
        if wanted != self._tail_of and wanted[1] > wanted[0]:
            self.run_worker(self._read_tail(*wanted), exclusive=True, group="tail")
        elif wanted != self._tail_of:
            self._tail, self._tail_of = (), wanted
        self._show()

    async def _read_tail(self, start: int, end: int) -> None:
        """The last lines between the last step line's end and the end read so far."""
        first = max(start, end - TAIL_BYTES)
        try:
            raw = await run_context(self).source.read_range(first, end)
        except (OSError, SourceError) as error:
            self.notify(safe_text(f"Could not read the log's last lines: {error}"), severity="warning",
                        markup=False)
            return
        lines = block_lines(raw, first, None)
        if first > start and lines:
            lines = lines[1:]  # begun mid-line
        self._tail, self._tail_of = tuple((line.offset, line.text) for line in lines), (start, end)
        self._show()

    def _show(self) -> None:
        context = run_context(self)
        rule = next((rule for rule in context.engine.rules if rule.kind == STALLED_KIND), None)
        explained = explain_stall(context.model, self.clock(), limits=rule.params if rule else None,
                                  accelerators=self.accelerators, tail=self._tail)
        if explained == self._shown:
            return
        self._shown, self.items = explained, explained.items
        style = _HEADLINE_STYLE.get(explained.state, "bold")
        self.query_one("#headline", Static).update(Content.styled(safe_text(explained.headline), style))
        options = self.query_one(OptionList)
        kept = options.highlighted
        options.clear_options()
        options.add_options([_prompt(item) for item in explained.items])
        options.display = bool(explained.items)
        if explained.items:
            options.highlighted = min(kept or 0, len(explained.items) - 1)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.items):
            self._open(self.items[event.option_index])

    def _open(self, item: Evidence) -> None:
        """The log at a log item's byte; other sources are all there is to see."""
        source = item.source
        start = max(0, run_context(self).model.last_step_line_end)
        if isinstance(source, LogLine):
            self.app.push_screen(LogAtScreen(min(start, source.offset), source.offset,
                                             source.text or item.says, item.says))
        elif isinstance(source, LogSpan):
            self.app.push_screen(LogAtScreen(source.start, None, "", item.says))
        else:
            self.notify(safe_text(f"Read from {source.kind}: {source.words()}"), markup=False)


def _prompt(item: Evidence) -> Text:
    """The item's sentence, then its source dimmed; log text literal and inert."""
    text = Text(safe_text(item.says))
    text.append("\n")
    text.append(f"  {item.source.kind}: {safe_text(item.source.words())}", style="dim")
    return text
