"""The steps table: one row per step, newest first, drawn only where it is visible.

A week-long run has 100,000 steps. A DataTable would hold a row object per
step and re-sort to put each new one on top; this widget holds no rows at
all. Row ``r`` is the ``r``-th newest step of the model's step index (or of
the filtered list), and each visible line reads its values from the series
when it is drawn, so opening the table, following new steps and jumping
anywhere cost the same on a 10-step run and a 100k-step one.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from tui.model.aliases import (
    ENTROPY,
    KL,
    POLICY_LOSS,
    STEP_TIME,
    TRAIN_REWARD,
    VALIDATION,
    Concept,
)
from tui.model.run_model import RunModel
from tui.model.series import Series
from tui.rules.findings import Finding, Severity
from tui.ui.format import format_number
from tui.ui.health import STATE_MARK, hits_at
from tui.ui.step_filter import filter_steps, parse_query
from tui.ui.widgets.cursor_table import CursorTable


@dataclass(frozen=True, slots=True)
class Column:
    """A numeric column: a dashboard concept's value at each step."""

    title: str
    concept: Concept
    optional: bool = False  # shown only when the run has the metric (validation)
    # Narrow terminals drop the columns of highest ``drop`` first; the step and the
    # rules column are never dropped (the state in words is what a row is for).
    drop: int = 0


COLUMNS = (
    Column("reward", TRAIN_REWARD), Column("val", VALIDATION, optional=True, drop=3),
    Column("pg loss", POLICY_LOSS, drop=2), Column("KL", KL, drop=4),
    Column("entropy", ENTROPY, drop=5), Column("s/it", STEP_TIME, drop=1),
)
STEP_WIDTH = 7
VALUE_WIDTH = 9
# The rules column is at least this wide: ``▲ WARN entropy-low +2`` whole.
STATE_MIN_WIDTH = 22
GAP = "  "


def fitting(columns: list[tuple[Column, Series | None]], width: int) -> list[tuple[Column, Series | None]]:
    """The columns that fit ``width`` beside the step and a whole rules column, dropping
    the least telling first (entropy, KL, validation…), in their original order."""
    kept = list(columns)
    def needed() -> int:
        return STEP_WIDTH + len(kept) * (len(GAP) + VALUE_WIDTH) + len(GAP) + STATE_MIN_WIDTH
    for column in sorted(columns, key=lambda item: -item[0].drop):
        if needed() <= width or column[0].drop == 0:
            break
        kept.remove(column)
    return kept


def verdicts(findings: list[Finding]) -> tuple:
    """What of the findings the rows show: each rule's hits (steps are only ever added to a
    finding, so their count and ends tell when they changed). The rules judge the run every
    few seconds into a new list; the table is redrawn only when this changes."""
    return tuple((f.rule, f.metric, f.severity, f.count, f.first_step, f.last_step)
                 for f in findings)


class StepTable(CursorTable):
    """Steps of a RunModel with their key metrics and the worst rule each broke."""

    BINDINGS = [
        Binding("k,up", "cursor(-1)", "Up", show=False, tooltip="previous row (a newer step)"),
        Binding("j,down", "cursor(1)", "Down", show=False, tooltip="next row (an older step)"),
        Binding("pageup", "page(-1)", "Page up", show=False, tooltip="a screenful newer"),
        Binding("pagedown", "page(1)", "Page down", show=False, tooltip="a screenful older"),
        Binding("home", "first", "Newest", show=False, tooltip="the newest step (and follow new ones)"),
        Binding("end", "last", "Oldest", show=False, tooltip="the oldest step"),
        Binding("enter", "select", "Open", tooltip="open the step's detail"),
    ]
    COMPONENT_CLASSES = {"step-table--header", "step-table--cursor", "step-table--critical",
                         "step-table--warning", "step-table--ok"}
    DEFAULT_CSS = """
    StepTable {
        height: 1fr;
        background: $surface;
    }
    StepTable > .step-table--header { text-style: bold; color: $text-muted; background: $panel; }
    StepTable > .step-table--cursor { background: $block-cursor-blurred-background; }
    StepTable:focus > .step-table--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
    }
    StepTable > .step-table--critical { color: $error; text-style: bold; }
    StepTable > .step-table--warning { color: $warning; }
    StepTable > .step-table--ok { color: $text-muted; }
    """

    class Selected(Message):
        """Enter (or a click) on a row: open that step."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    def __init__(self, model: RunModel, *, on_move: Callable[[], None] | None = None,
                 id: str | None = None) -> None:
        """``on_move`` is called as the cursor goes to another row (the steps screen's title
        says whether it follows): called, not sent as a message, since a message reached
        the screen after the table's two repainted rows were drawn, and the title came a
        frame later, the next tick of the screen's update timer (about 25 ms)."""
        super().__init__(id=id)
        self.model = model
        self._on_move = on_move
        self.findings: list[Finding] = []
        self.query_text = ""
        # The filtered steps (ascending), or None to show every step of the index.
        self._filtered: array | None = None
        # Rows as of the last sync: new steps show when the cursor moves with them.
        self._count = 0
        self._columns: list[tuple[Column, Series | None]] = []
        self._all_columns: list[tuple[Column, Series | None]] = []
        self._synced: tuple | None = None

    # -- rows ---------------------------------------------------------------

    def _steps(self) -> array:
        """The steps shown, ascending: the first ``row_count`` of them, row 0 the last."""
        return self.model.every_step() if self._filtered is None else self._filtered

    @property
    def row_count(self) -> int:
        return self._count

    def step_at(self, row: int) -> int | None:
        """The step on ``row`` (0 = the newest shown)."""
        steps = self._steps()
        at = self._count - 1 - row
        return steps[at] if row >= 0 and 0 <= at < len(steps) else None

    def row_of(self, step: int) -> int:
        """The row of ``step``, or of the newest shown step before it (the oldest row
        when it is before them all)."""
        shown = min(self._count, len(self._steps()))
        return self._count - 1 - max(0, bisect_right(self._steps(), step, 0, shown) - 1)

    @property
    def cursor_step(self) -> int | None:
        return self.step_at(self.cursor)

    # -- following the model and the rules ---------------------------------

    def sync(self, findings: list[Finding], query: str | None = None) -> None:
        """Take new steps, new findings or a new filter; cheap when nothing changed.

        At the top row the cursor follows the newest step; anywhere else it
        stays on its step while new rows arrive above it.
        """
        if query is not None:
            self.query_text = query
        steps = self.model.every_step()
        signature = (id(steps), len(steps), self.model.version, verdicts(findings), self.query_text)
        if signature == self._synced:
            self.findings = findings  # the same verdicts in the list of the latest judgement
            return
        self._synced = signature
        # The cursor stays on its step unless it follows new ones (the top row, unfiltered):
        # a filtered list's top row is a step like any other, which new rows push down.
        kept = self.cursor_step if not self.following or query is not None else None
        self.findings = findings
        wanted = parse_query(self.query_text)
        self._filtered = (None if wanted.empty
                          else filter_steps(wanted, findings, steps, self.model.series))
        self._count = len(self._steps())
        self._all_columns = [(column, self.model.series_for(column.concept)[0]) for column in COLUMNS]
        self._all_columns = [(c, s) for c, s in self._all_columns if s is not None or not c.optional]
        self._columns = fitting(self._all_columns, self.scrollable_content_region.width)
        self.virtual_size = Size(self._row_width(), self.row_count + 1)
        if kept is not None:
            moved = self.row_of(kept) - self.cursor
            self.scroll_to(y=self.scroll_y + moved, animate=False)
            self.cursor += moved
        self._move(self.cursor)
        self.refresh()

    def jump_to(self, step: int) -> int | None:
        """Put the cursor on ``step`` (or the newest shown step before it), mid-screen
        so its neighbours show too; the step it landed on."""
        self._move(self.row_of(step))
        self.scroll_to(y=max(0, self.cursor - self._body_height() // 2), animate=False)
        return self.cursor_step

    # -- keys ---------------------------------------------------------------

    def action_first(self) -> None:
        self._move(0)

    def action_last(self) -> None:
        self._move(self.row_count - 1)

    def action_select(self) -> None:
        step = self.cursor_step
        if step is not None:
            self.post_message(self.Selected(step))

    def _moved(self) -> None:
        if self._on_move is not None:
            self._on_move()

    # -- drawing ------------------------------------------------------------

    def _row_width(self) -> int:
        fixed = STEP_WIDTH + len(self._columns) * (len(GAP) + VALUE_WIDTH) + len(GAP)
        return fixed + max(STATE_MIN_WIDTH, self.scrollable_content_region.width - fixed)

    @property
    def following(self) -> bool:
        """Whether new steps move the cursor with them (it is on the top row, unfiltered)."""
        return self.cursor == 0 and not self.query_text.strip()

    def on_resize(self) -> None:
        self._columns = fitting(self._all_columns, self.scrollable_content_region.width)
        self.virtual_size = Size(self._row_width(), self.row_count + 1)
        self._move(self.cursor)

    def render_line(self, y: int) -> Strip:
        """Line 0 is the header, fixed; the rest are rows from the scroll position."""
        if y == 0:
            cells = self._header_cells()
        else:
            row = int(self.scroll_y) + y - 1
            step = self.step_at(row)
            if step is None:
                return Strip.blank(self.size.width, self.rich_style)
            cells = self._row_cells(step)
            if row == self.cursor:
                cursor = self.get_component_rich_style("step-table--cursor")
                cells = [(text, style + cursor) for text, style in cells]
        width = self.scrollable_content_region.width
        scroll_x = int(self.scroll_x)
        strip = Strip([Segment(text, style) for text, style in cells])
        return strip.crop(scroll_x, scroll_x + width).extend_cell_length(width, self.rich_style)

    def _header_cells(self) -> list[tuple[str, Style]]:
        style = self.rich_style + self.get_component_rich_style("step-table--header")
        titles = ["step".rjust(STEP_WIDTH)] + [column.title.rjust(VALUE_WIDTH)
                                               for column, _ in self._columns]
        return [(GAP.join(titles) + GAP + "rules".ljust(self._state_width()), style)]

    def _row_cells(self, step: int) -> list[tuple[str, Style]]:
        base = self.rich_style
        values = [str(step).rjust(STEP_WIDTH)]
        for _, series in self._columns:
            value = series.value_at(step) if series is not None else None
            values.append(("" if value is None else format_number(value)).rjust(VALUE_WIDTH))
        state_text, state_class = self._state(step)
        state_style = base + self.get_component_rich_style(state_class)
        return [(GAP.join(values) + GAP, base),
                (set_cell_size(state_text, self._state_width()), state_style)]

    def _state_width(self) -> int:
        return self.virtual_size.width - (STEP_WIDTH + len(self._columns) * (len(GAP) + VALUE_WIDTH)
                                          + len(GAP))

    def _state(self, step: int) -> tuple[str, str]:
        """The worst rule the step broke, and how many more ("▲ WARN kl-high +1")."""
        hits = hits_at(self.findings, step)
        if not hits:
            return STATE_MARK[None], "step-table--ok"
        worst = hits[0]
        more = f" +{len(hits) - 1}" if len(hits) > 1 else ""
        # A note, or a muted finding, is said in the quiet colour of a step that broke nothing.
        style = ("step-table--ok" if not worst.counts else
                 "step-table--critical" if worst.severity == Severity.CRITICAL else "step-table--warning")
        return f"{STATE_MARK[worst.severity]} {worst.rule}{more}", style
