"""The compare screen: several runs' key metrics in the same charts, their numbers side by
side, and the settings in which they differ.

Opened by ``rlwatch compare A B …`` and, through the ``CompareRuns`` message, from
any screen that holds several sessions (the fleet view). It reads each session's
model and never parses: the curves are the sessions' series, the bands the
sessions' rules, the settings ``RunSession.read_config`` (one read of each log's
head). Runs are aligned by step: run B's step 300 is drawn above run A's step 300
whatever the time each took.

Three tabs, so that 80×24 stays readable: the charts (as many per page as the
terminal holds, ``[``/``]`` for the others), the numbers (last, best, mean), the
settings that differ. ``e`` smooths the charts with TensorBoard's EMA, ``+``/``-``
change its weight.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.color import Color
from textual.containers import Grid
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static, TabbedContent, TabPane

from tui.model.aliases import DASHBOARD_CONCEPTS, Concept
from tui.model.comparison import RunNumbers, run_numbers
from tui.model.smoothing import MAX_WEIGHT, clamp_weight
from tui.parsers.run_config import ABSENT, UNKNOWN
from tui.parsers.text import safe_text
from tui.rules.engine import first_key
from tui.rules.run_state import RunState, run_state
from tui.session.run_session import RunChanged, RunSession
from tui.ui.messages import RunUpdated
from tui.ui.run_line import run_name
from tui.ui.screens.help import HelpScreen
from tui.ui.widgets.compare_chart import ChartLine, CompareChart
from tui.ui.widgets.compare_legend import CompareLegend
from tui.ui.widgets.compare_tables import CompareNumbers, ConfigDiff
from tui.ui.widgets.key_bar import KeyBar
from tui.ui.widgets.metric_grid import EXTRA_CONCEPTS
from tui.ui.widgets.title_bar import TitleBar

# The checklist's key metrics, then the extra ones (clip fraction, throughput, memory).
CONCEPTS: tuple[Concept, ...] = DASHBOARD_CONCEPTS + EXTRA_CONCEPTS
# Each run's colour (a theme variable, so the colour-blind theme applies) and the
# glyph it is drawn with (plotext's marker, and the legend's sign for it).
RUN_COLOURS = ("primary", "accent", "success", "secondary", "error", "foreground")
RUN_MARKERS = (("braille", "⣿"), ("•", "•"), ("x", "x"), ("+", "+"), ("o", "o"), ("*", "*"))
# A chart needs about this many columns and rows to be read (axes, a title, a curve).
CHART_COLUMNS = 60
CHART_ROWS = 12
# ``e`` turns smoothing on at TensorBoard's default weight; ``+``/``-`` move it by a step.
DEFAULT_WEIGHT = 0.6
WEIGHT_STEP = 0.1
# How often the screen looks whether a run changed (a redraw happens only then).
REFRESH_SECONDS = 1.0


# The states worth a colour in the title (the word says it without one).
STATE_STYLES = {RunState.CRASHED: "bold $error", RunState.STALLED: "bold $warning",
                RunState.RUNNING: "$success"}


def run_names(sessions: Sequence[RunSession]) -> list[str]:
    """Each run's short name, its whole label where two short names are the same."""
    short = [run_name(session.label) for session in sessions]
    return [name if short.count(name) == 1 else session.label for name, session in zip(short, sessions)]


def run_letter(index: int) -> str:
    """A run's letter: A to Z, then A2, B2, …"""
    return chr(ord("A") + index % 26) + (str(index // 26 + 1) if index >= 26 else "")


def band_edges(concept: Concept, sessions: Sequence[RunSession]) -> list[tuple[str, float]]:
    """(label, level) of each band-rule edge that judges ``concept`` in any of the runs,
    once each (runs of one sweep share their rules)."""
    edges: dict[tuple[str, float], None] = {}
    for session in sessions:
        key = concept.resolve(session.model.series)
        for rule in session.engine.rules:
            if key is None or rule.kind != "band" or \
                    first_key(rule.metrics, session.model.series, rule.skip_zero) != key:
                continue
            for edge, sign in (("low", "≥"), ("high", "≤")):
                level = rule.params.get(edge)
                if level is not None:
                    edges[(f"{rule.id} {sign} {level:g}", float(level))] = None
    return list(edges)


class CompareScreen(Screen[None]):
    """Several runs side by side: charts, numbers, settings."""

    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="back to the previous screen"),
        Binding("1", "tab('charts')", "Charts", tooltip="the key metrics, one line per run"),
        Binding("2", "tab('numbers')", "Numbers", tooltip="last, best and mean of each metric, per run"),
        Binding("3", "tab('settings')", "Settings", tooltip="the settings in which the runs differ"),
        Binding("right_square_bracket", "page(1)", "More", key_display="]",
                tooltip="the next charts, where not all fit"),
        Binding("left_square_bracket", "page(-1)", "Prev", key_display="[", show=False,
                tooltip="the previous charts"),
        Binding("e", "smoothing", "Smooth", tooltip="smooth the curves (TensorBoard's EMA) or not"),
        Binding("plus,equals_sign", "weight(1)", "More smooth", key_display="+", show=False,
                tooltip="smooth more (EMA weight up to 0.99)"),
        Binding("minus", "weight(-1)", "Less smooth", key_display="-", show=False,
                tooltip="smooth less (EMA weight down to 0)"),
        # Its own, so ``rlwatch compare`` (whose app has no help of its own) has it too.
        Binding("question_mark", "help", "Help", key_display="?", tooltip="show the keys of this screen"),
    ]
    GUIDE = (
        "One line per run, aligned by step, in the legend's colour and sign; the tables "
        "name each run by its letter in the legend. Horizontal "
        "lines: the edges of the rule bands that judge the metric. Smoothing (e, + and -) "
        "is TensorBoard's debiased EMA over every point. Numbers: best is the highest "
        "reward or validation score and the lowest s/step (▲/▼ marks the best run); the "
        "other metrics are healthy in a band, so they have none. Settings: what the runs "
        "printed at start; bold: set on a launch command; — the run has no such setting; "
        "? only its command line was found; enter shows a setting's whole value in each run."
    )
    DEFAULT_CSS = """
    CompareScreen TabbedContent, CompareScreen ContentSwitcher { height: 1fr; }
    CompareScreen TabPane { padding: 0; height: 1fr; }
    CompareScreen #compare-charts { grid-size: 1 1; height: 1fr; }
    CompareScreen #config-summary { height: auto; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, sessions: Sequence[RunSession], names: Sequence[str] | None = None) -> None:
        """``sessions``: the runs, connected and followed (or loaded) by the caller;
        ``names``: how to call them (default: their short names)."""
        super().__init__()
        self.sessions = list(sessions)
        self.names = list(names) if names is not None else run_names(self.sessions)
        # The tables head each run's column with a letter, read back in the legend.
        self.letters = [run_letter(index) for index in range(len(self.sessions))]
        self.weight = 0.0
        self._last_weight = DEFAULT_WEIGHT
        self.page = 0
        self.per_page = 1
        self._dirty = True

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield CompareLegend()
        with TabbedContent(initial="charts"):
            with TabPane("Charts", id="charts"), Grid(id="compare-charts"):
                for concept in CONCEPTS:
                    yield CompareChart(concept)
            with TabPane("Numbers", id="numbers"):
                yield CompareNumbers()
            with TabPane("Settings", id="settings"):
                yield Static(id="config-summary", markup=False)
                yield ConfigDiff()
        yield KeyBar()

    def on_mount(self) -> None:
        for session in self.sessions:
            session.listen(self._run_changed)
        self.set_interval(REFRESH_SECONDS, self._refresh_if_changed)
        self._show_config()
        self.run_worker(self._read_configs(), group="compare-config", exclusive=True)
        self.call_after_refresh(self._draw)
        # The runs' colours are the theme's: a new theme redraws the lines, legend and heads.
        self.app.theme_changed_signal.subscribe(self, lambda _: self.on_resize())

    def _run_changed(self, change: RunChanged) -> None:
        self._dirty = self._dirty or change.model

    def _refresh_if_changed(self) -> None:
        """Redraw at most once a second, and only after a run changed: a backfill changes
        the runs hundreds of times a second, and the numbers table is rebuilt on each draw."""
        if self._dirty:
            self._draw()
            if any(session.model.config is None or not session.model.config.complete
                   for session in self.sessions):
                self.run_worker(self._read_configs(), group="compare-config", exclusive=True)

    def on_run_updated(self, _: RunUpdated) -> None:
        """The dashboard's app redrew its run (this screen over it): draw on the next tick."""
        self._dirty = True

    def on_resize(self) -> None:
        """Lay the charts out again and draw them; the settings' columns share the width."""
        self.call_after_refresh(self._draw)
        self.call_after_refresh(self._show_config)

    async def _read_configs(self) -> None:
        """Each run's settings, read once from its log's head (a run that has not printed
        them yet is asked again when its log grew)."""
        for session in self.sessions:
            await session.read_config()
        self._show_config()

    def on_data_table_row_selected(self, event: ConfigDiff.RowSelected) -> None:
        """``enter`` on a setting: its whole value in each run (the table cuts long ones)."""
        if event.data_table is not self.query_one(ConfigDiff) or event.row_key.value is None:
            return
        key = event.row_key.value
        lines = [safe_text(key)]
        for letter, session in zip(self.letters, self.sessions):
            config = session.model.config
            lines.append(f"{letter}  {safe_text(config.shown(key) if config else UNKNOWN)}")
        self.notify("\n".join(lines), title="setting", timeout=20, markup=False)

    # -- keys -------------------------------------------------------------------

    def action_back(self) -> None:
        self.dismiss()

    def action_help(self) -> None:
        bindings = [active.binding for active in self.active_bindings.values()]
        self.app.push_screen(HelpScreen(bindings, self.GUIDE))

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_page(self, delta: int) -> None:
        pages = self._pages()
        self.page = (self.page + delta) % pages
        self._draw()

    def action_smoothing(self) -> None:
        if self.weight > 0:
            self._last_weight, self.weight = self.weight, 0.0
        else:
            self.weight = self._last_weight
        self._draw()

    def action_weight(self, direction: int) -> None:
        weight = round(self.weight + direction * WEIGHT_STEP, 2)
        self.weight = clamp_weight(min(weight, MAX_WEIGHT) if direction > 0 else weight)
        if self.weight > 0:
            self._last_weight = self.weight
        self._draw()

    # -- drawing ----------------------------------------------------------------

    def _heads(self) -> list[Text]:
        """Each run's column head in the tables: its letter and glyph, in its colour."""
        return [Text(f"{letter} {glyph}", style=f"bold {colour.hex}")
                for letter, (colour, _, glyph) in zip(self.letters, self._colours())]

    def _colours(self) -> list[tuple[Color, str, str]]:
        """Each run's colour, plotext marker and legend glyph, in run order."""
        variables = self.app.theme_variables
        out = []
        for index in range(len(self.sessions)):
            colour = Color.parse(variables[RUN_COLOURS[index % len(RUN_COLOURS)]])
            marker, glyph = RUN_MARKERS[index % len(RUN_MARKERS)]
            out.append((colour, marker, glyph))
        return out

    def _shown_concepts(self) -> list[Concept]:
        """The metrics at least one run has."""
        return [concept for concept in CONCEPTS
                if any(session.model.series_for(concept)[0] is not None for session in self.sessions)]

    def _pages(self) -> int:
        shown = len(self._shown_concepts())
        return max(1, -(-shown // self.per_page))

    def _layout(self) -> None:
        """As many charts side by side and above each other as the terminal holds."""
        grid = self.query_one("#compare-charts", Grid)
        width, height = grid.size.width or self.size.width, grid.size.height or self.size.height
        columns = max(1, width // CHART_COLUMNS)
        rows = max(1, height // CHART_ROWS)
        shown = len(self._shown_concepts())
        while columns * (rows - 1) >= max(shown, 1) and rows > 1:
            rows -= 1  # no empty row of charts where fewer metrics remain
        while (columns - 1) * rows >= max(shown, 1) and columns > 1:
            columns -= 1
        self.per_page = columns * rows
        grid.styles.grid_size_columns, grid.styles.grid_size_rows = columns, rows
        self.page = min(self.page, self._pages() - 1)

    def _draw(self) -> None:
        self._dirty = False
        self._layout()
        colours = self._colours()
        self.query_one(CompareLegend).show(
            [(letter, glyph, f"bold {colour.hex}", name)
             for letter, (colour, _, glyph), name in zip(self.letters, colours, self.names)])
        shown = self._shown_concepts()
        on_page = shown[self.page * self.per_page:(self.page + 1) * self.per_page]
        band_colour = Color.parse(self.app.theme_variables["warning"]).rgb
        numbers: list[tuple[Concept, list[RunNumbers | None]]] = []
        for chart in self.query(CompareChart):
            chart.display = chart.concept in on_page
        for concept in shown:
            series = [session.model.series_for(concept)[0] for session in self.sessions]
            numbers.append((concept, [None if s is None else run_numbers(s, concept) for s in series]))
            if concept in on_page:
                lines = [ChartLine(name, found, colour.rgb, marker)
                         for name, found, (colour, marker, _) in zip(self.names, series, colours)]
                chart = self.query_one(f"#compare-{concept.id}", CompareChart)
                chart.draw(lines, band_edges(concept, self.sessions), band_colour, self.weight)
        self.query_one(CompareNumbers).show(self._heads(), numbers)
        self._title(len(shown), len(on_page))

    def _show_config(self) -> None:
        configs = [session.model.config for session in self.sessions]
        diff = self.query_one(ConfigDiff)
        diff.show(self._heads(), configs, self.size.width)
        printed = sum(1 for config in configs if config is not None and config.complete)
        commands = sum(1 for config in configs if config is not None and not config.complete)
        missing = sum(1 for config in configs if config is None)
        parts = [f"{len(diff.differing)} settings differ"]
        if printed:
            parts.append(f"{printed} printed in full")
        if commands:
            parts.append(f"{commands} from the launch command only ({UNKNOWN}: not known)")
        if missing:
            parts.append(f"{missing} with none found")
        parts.append(f"bold: set on a launch command; {ABSENT}: the run has no such setting")
        self.query_one("#config-summary", Static).update(" · ".join(parts))

    def _title(self, shown: int, on_page: int) -> None:
        first = self.page * self.per_page + 1
        where = (f"charts {first}–{first + on_page - 1} of {shown}" if on_page > 1
                 else f"chart {first} of {shown}") if shown else "no metric yet"
        smoothing = f"smoothing {self.weight:.2f}" if self.weight > 0 else "raw (e smooths)"
        # Each run's last step and state: a run that crashed or stalled says so here, not
        # only by its curves stopping short.
        runs: list[Content | tuple[str, str] | str] = []
        for letter, session in zip(self.letters, self.sessions):
            state = run_state(session.model, session.findings)
            step = "—" if session.model.last_step is None else str(session.model.last_step)
            runs += ["  ", (f"{letter} {step} ", "$text-muted"), (state.value, STATE_STYLES.get(state, "$text-muted"))]
        self.query_one(TitleBar).update(Content.assemble(  # the runs first: 80 columns cut the end
            (f"compare {len(self.sessions)} runs", "bold $accent"), *runs, "  ", where, "  ",
            (smoothing, "bold" if self.weight > 0 else "$text-muted")))
