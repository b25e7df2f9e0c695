"""The fleet: one row per run, the worst first, live; enter opens a run's dashboard.

The app hands the screen fresh rows (``show``) when runs change, at most once
a second; the screen only draws them. The cursor stays on its run while the
rows re-sort under it. Space marks runs; ``c`` asks for the marked ones (or
the one under the cursor and the next) to be compared (``CompareRuns``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable

from tui.parsers.text import safe_text
from tui.session.fleet import FleetRun
from tui.ui.fleet_rows import RATE_WIDTH, VALUE_WIDTH, FleetRow, RowState, fleet_line
from tui.ui.messages import CompareRuns
from tui.ui.telling_names import telling_names
from tui.ui.widgets.key_bar import KeyBar
from tui.ui.widgets.title_bar import TitleBar


@dataclass(frozen=True, slots=True)
class Column:
    """A column of the table: its title, the row's field, its width, and ``drop``: narrow
    screens drop the highest first (0: never dropped)."""

    title: str
    field: str
    width: int
    drop: int = 0


# The run's name and the worst finding share what the other columns leave: a narrow screen
# drops columns until they have at least this much; the name takes up to half of it.
NAME_MIN_WIDTH = 12
WORST_MIN_WIDTH = 30
COLUMNS = (
    Column("", "mark", 1),
    Column("state", "state", 11),
    Column("run", "name", NAME_MIN_WIDTH),
    Column("host", "host", 10, drop=3),
    Column("step", "step", 9),
    Column("s/it", "sec_per_it", RATE_WIDTH, drop=6),
    Column("ETA", "eta", 6, drop=5),
    Column("last", "since", 6, drop=1),
    Column("reward", "reward", VALUE_WIDTH),
    Column("val", "val", VALUE_WIDTH, drop=2),
    Column("GPU", "accelerators", 8, drop=4),
    Column("worst finding", "worst", WORST_MIN_WIDTH),
)
# What DataTable adds around each cell (one column of padding on each side), and the room
# kept for its scrollbar.
CELL_PADDING = 2
SCROLLBAR = 2
# The style of each state's word, as the findings screen colours severities (the word says
# it without the colour).
STATE_STYLE = {
    RowState.CRASHED: "bold red", RowState.UNREACHABLE: "bold red", RowState.STALLED: "bold yellow",
    RowState.CRITICAL: "red", RowState.WARNING: "yellow", RowState.RUNNING: "green",
    RowState.OPENING: "dim", RowState.PENDING: "dim", RowState.FINISHED: "dim",
}


def fitting(width: int) -> list[Column]:
    """The columns that fit ``width``, dropping the least telling first (s/it, ETA, the GPUs,
    the host, validation; the time since the last step last); the name and the worst finding
    share the rest (``shares``)."""
    kept = list(COLUMNS)

    def needed() -> int:
        return sum(column.width + CELL_PADDING for column in kept) + SCROLLBAR

    for column in sorted(COLUMNS, key=lambda column: -column.drop):
        if needed() <= width or column.drop == 0:
            break
        kept.remove(column)
    return kept


@dataclass(frozen=True, slots=True)
class Shares:
    """How the run and worst-finding columns share what the others leave."""

    name_width: int
    worst_width: int
    shown: dict[str, str]  # each run's name as its row shows it


def shares(columns: Sequence[Column], width: int, names: Sequence[str]) -> Shares:
    """Each name whole where the names fit in half of what the fixed columns leave, else cut
    to the part that tells them apart (``telling_names``); the worst finding takes the rest."""
    fixed = sum(c.width + CELL_PADDING for c in columns if c.field not in ("name", "worst"))
    spare = width - fixed - 2 * CELL_PADDING - SCROLLBAR
    shown = telling_names(names, max(NAME_MIN_WIDTH, spare // 2))
    name_width = max([len("run"), *(len(name) for name in shown)])
    return Shares(name_width, max(len("worst finding"), spare - name_width), dict(zip(names, shown)))


class FleetScreen(Screen[None]):
    """One row per run; enter opens its dashboard (escape there comes back here)."""

    BINDINGS = [
        Binding("enter", "open", "Open", tooltip="the dashboard of the run under the cursor"),
        Binding("space", "mark", "Mark", tooltip="mark or unmark the run (for compare)"),
        Binding("c", "compare", "Compare",
                tooltip="compare the marked runs (none marked: this one and the next)"),
    ]
    GUIDE = (
        "One row per run, the worst first: crashed, unreachable (its host is down or its "
        "path is missing; retried), stalled, critical, warning, running, finished. "
        "'last' is the time since the run's last step; GPU is the mean use of its host's "
        "devices. enter opens a run's dashboard, escape comes back."
    )
    DEFAULT_CSS = """
    FleetScreen DataTable { height: 1fr; }
    """

    class Opened(Message):
        """The user opened ``run`` (its session open): the app shows its dashboard."""

        def __init__(self, run: FleetRun) -> None:
            super().__init__()
            self.run = run

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[FleetRun, FleetRow]] = []
        self.marked: set[int] = set()  # the marked runs, by id()
        self._columns: list[Column] = []
        self._width = 0  # the width the columns were laid out for
        self._shares = Shares(0, 0, {})

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield KeyBar()

    def on_mount(self) -> None:
        self._lay_out(self.size.width)
        self.query_one(DataTable).focus()

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._width:
            self._lay_out(event.size.width, self.current)

    def _lay_out(self, width: int, current: FleetRun | None = None) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        self._width, self._columns = width, fitting(width)
        self._shares = self._shared(width)
        for column in self._columns:
            size = {"name": self._shares.name_width,
                    "worst": self._shares.worst_width}.get(column.field, column.width)
            table.add_column(column.title, key=column.field, width=size)
        self._draw(current)

    def _shared(self, width: int) -> Shares:
        return shares(self._columns, width, list(dict.fromkeys(row.name for _, row in self.rows)))

    def show(self, rows: Sequence[tuple[FleetRun, FleetRow]]) -> None:
        """Draw these rows (already worst first), the cursor staying on its run; nothing to
        do when they say what is shown (an idle fleet redraws nothing)."""
        rows = list(rows)
        if rows == self.rows:
            return
        current = self.current if self.is_mounted else None
        self.rows = rows
        if not self.is_mounted:
            return
        if self._shared(self.size.width) != self._shares:  # new names
            self._lay_out(self.size.width, current)
        else:
            self._draw(current)

    def _draw(self, current: FleetRun | None = None) -> None:
        """Fill the table from ``rows``, the cursor on ``current`` (default: the run under it).

        Rows in the order already shown have only their changed cells replaced: an idle
        fleet's redraw is a GPU reading or an age here and there, and rebuilding twenty
        rows for it cost most of the fleet's idle CPU."""
        table = self.query_one(DataTable)
        keys = [str(id(run)) for run, _ in self.rows]
        cells = [[self._cell(run, row, column) for column in self._columns] for run, row in self.rows]
        if keys == [key.value for key in table.rows] and len(table.columns) == len(self._columns):
            for key, new in zip(keys, cells):
                for column, old, cell in zip(self._columns, table.get_row(key), new):
                    if old != cell:
                        table.update_cell(key, column.field, cell)
        else:
            current = current or self.current
            table.clear()
            for key, row_cells in zip(keys, cells):
                table.add_row(*row_cells, key=key)
            if current is not None and str(id(current)) in keys:  # a glob's row may be gone
                table.move_cursor(row=keys.index(str(id(current))), animate=False)
        self.query_one(TitleBar).update(Content.assemble(
            ("Fleet", "bold"), "  ", fleet_line([row for _, row in self.rows]),
            "  ", (f"{len(self.marked)} marked" if self.marked else "", "bold")))

    def _cell(self, run: FleetRun, row: FleetRow, column: Column) -> Text:
        if column.field == "mark":
            return Text("●" if id(run) in self.marked else " ")
        if column.field == "state":
            return Text(row.state.value, style=STATE_STYLE[row.state])
        if column.field == "name":
            return Text(safe_text(self._shares.shown.get(row.name, row.name)), no_wrap=True, overflow="ellipsis")
        # Names, hosts and findings come from paths and logs: drawn literally.
        return Text(safe_text(str(getattr(row, column.field))), no_wrap=True, overflow="ellipsis")

    @property
    def current(self) -> FleetRun | None:
        """The run under the cursor."""
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row < 0 or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row][0]

    def action_open(self) -> None:
        run = self.current
        if run is None:
            return
        if run.session is None or run.reach != "open":
            self.notify(safe_text(run.problem or f"{run.name} is still opening"),
                        severity="warning", markup=False)
            return
        self.post_message(self.Opened(run))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_mark(self) -> None:
        run = self.current
        if run is None:
            return
        self.marked ^= {id(run)}
        self._draw()
        self.query_one(DataTable).action_cursor_down()

    def action_compare(self) -> None:
        """Ask for the marked runs to be compared (none marked: this one and the next)."""
        chosen = [run for run, _ in self.rows if id(run) in self.marked]
        if not chosen:
            at = self.query_one(DataTable).cursor_row
            chosen = [run for run, _ in self.rows[at:at + 2]]
        sessions = [run.session for run in chosen if run.session is not None and run.reach == "open"]
        if len(sessions) < 2:
            self.notify("Mark two or more open runs (space) to compare them.", severity="warning")
            return
        self.post_message(CompareRuns(sessions))
