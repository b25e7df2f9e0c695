"""The ``c`` screen: one metric over the whole run, full size, with a step cursor.

Drawn with plotext (textual-plotext). The rule bands that judge this key are
horizontal lines, validation points are marked, and the cursor (left/right)
picks the step that ``enter`` opens. Like the panels, the curve
keeps every spike: a long run is drawn as the lowest and highest point of
each column's steps, not a sample of them.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.color import Color
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static
from textual_plotext import Plot

from tui.model.aliases import TRAIN_REWARD, VALIDATION
from tui.model.series import Steps
from tui.parsers.text import safe_text
from tui.rules.engine import first_key
from tui.ui.format import format_exact
from tui.ui.health import STATE_MARK, hits_at, level_style
from tui.ui.messages import RunUpdated
from tui.ui.run_context import RunContext, run_context
from tui.ui.screens.goto_step import GoToStepScreen, landing_step
from tui.ui.widgets.chart_plot import ChartPlot
from tui.ui.widgets.key_bar import KeyBar
from tui.ui.widgets.title_bar import TitleBar

# shift+left/right move the cursor by this share of the run's points.
LEAP = 0.1


def envelope(steps: Sequence[int], values: Sequence[float],
             buckets: int) -> tuple[list[int], list[float]]:
    """At most ``2 × buckets`` points, in step order: each bucket's lowest and highest
    finite value, so a one-step spike survives any amount of shrinking. Worked out with
    numpy (a 100k-point series in milliseconds, where a list of pairs took a tenth of a
    second on every ``c``)."""
    import numpy

    all_steps = (numpy.arange(steps.start, steps.stop, steps.step, dtype=numpy.int64)
                 if isinstance(steps, range) else numpy.asarray(steps, dtype=numpy.int64))
    all_values = numpy.asarray(values, dtype=numpy.float64)
    finite = numpy.isfinite(all_values)
    xs_all, ys_all = all_steps[finite], all_values[finite]
    if len(ys_all) <= 2 * buckets:
        return xs_all.tolist(), ys_all.tolist()
    size = len(ys_all) / buckets
    picked: list[int] = []
    for index in range(buckets):
        start, stop = int(index * size), int((index + 1) * size)
        chunk = ys_all[start:stop]
        low, high = start + int(chunk.argmin()), start + int(chunk.argmax())
        picked.extend(sorted({low, high}))
    return xs_all[picked].tolist(), ys_all[picked].tolist()


def step_ticks(first: int, last: int, count: int = 5) -> list[int]:
    """The first and last step, and between them whole steps at a round interval (1, 2, 2.5
    or 5 times a power of ten) for about ``count`` ticks in all, none crowding an end:
    plotext's own ticks split the span evenly (``10.8``, ``20.5``), and a step is a whole
    number."""
    if last <= first:
        return [first]
    raw = (last - first) / max(1, count - 1)
    power = 10 ** math.floor(math.log10(raw))
    interval = max(1, int(next(power * m for m in (1, 2, 2.5, 5, 10) if power * m >= raw)))
    inner = range(-(-first // interval) * interval, last + 1, interval)
    return [first, *(tick for tick in inner
                     if tick - first > interval / 2 and last - tick > interval / 2), last]


def bands_for(key: str, run: RunContext) -> list[tuple[str, float]]:
    """(label, level) of each band-rule edge that judges ``key`` ("kl-high ≤ 0.03")."""
    edges = []
    for rule in run.engine.rules:
        if rule.kind != "band" or first_key(rule.metrics, run.model.series,
                                            rule.skip_zero) != key:
            continue
        if rule.params.get("low") is not None:
            edges.append((f"{rule.id} ≥ {rule.params['low']:g}", float(rule.params["low"])))
        if rule.params.get("high") is not None:
            edges.append((f"{rule.id} ≤ {rule.params['high']:g}", float(rule.params["high"])))
    return edges


class ChartScreen(Screen[None]):
    """One metric's full chart; the cursor moves over its points."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", tooltip="back to the previous screen"),
        Binding("left", "move(-1)", "Prev point", key_display="←", tooltip="cursor to the previous point"),
        Binding("right", "move(1)", "Next point", key_display="→", tooltip="cursor to the next point"),
        Binding("shift+left", "leap(-1)", "Back 10%", show=False,
                tooltip="cursor back a tenth of the run"),
        Binding("shift+right", "leap(1)", "On 10%", show=False,
                tooltip="cursor on a tenth of the run"),
        Binding("home", "end(0)", "First", show=False, tooltip="cursor to the first point"),
        Binding("end", "end(-1)", "Last", show=False,
                tooltip="cursor to the newest point (and follow new ones)"),
        Binding("enter", "open_step", "Open step", tooltip="the detail of the step under the cursor"),
        Binding("g", "go_to", "Go to", tooltip="ask for a step number and put the cursor there"),
    ]
    GUIDE = (
        "The whole run, each column the lowest and highest value of its steps, so no spike "
        "is lost. Horizontal lines: the edges of the rule bands that judge this metric. "
        "● validation points; ◆ the cursor's step."
    )
    DEFAULT_CSS = """
    ChartScreen ChartPlot { height: 1fr; }
    ChartScreen #chart-legend { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, key: str, step: int | None = None) -> None:
        super().__init__()
        self.key = key
        self.step = step
        # What the figure was built from, and what the title shows: each drawn again only
        # when it changed (a cursor move changes the title and the cursor, not the figure).
        self._built: tuple | None = None
        self._titled: tuple | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="chart-legend", markup=False)
        yield ChartPlot()
        yield KeyBar()

    def on_mount(self) -> None:
        self._draw(opening=True)

    def show(self, key: str, step: int | None) -> None:
        """Chart ``key`` with the cursor on ``step``: the app keeps this screen between
        visits, so ``c`` on the same metric again draws nothing but the cursor."""
        self.key, self.step = key, step
        if self.is_mounted:
            self._draw(opening=True)

    def on_screen_resume(self) -> None:
        self._draw()

    def on_run_updated(self, _: RunUpdated) -> None:
        """New points or findings (a redraw happens only when they touch this chart)."""
        self._draw()

    def _points(self) -> tuple[Steps, array]:
        series = run_context(self).model.series.get(self.key)
        return (series.steps, series.values) if series is not None else (range(0), array("d"))

    def _cursor(self) -> int | None:
        """Index of the cursor's point: the chosen step, else the newest."""
        steps, _ = self._points()
        if not steps:
            return None
        if self.step is None:
            return len(steps) - 1
        return min(bisect_left(steps, self.step), len(steps) - 1)

    def action_move(self, delta: int) -> None:
        self._move_to((self._cursor() or 0) + delta)

    def action_leap(self, direction: int) -> None:
        steps, _ = self._points()
        self._move_to((self._cursor() or 0) + direction * max(1, int(len(steps) * LEAP)))

    def action_end(self, index: int) -> None:
        steps, _ = self._points()
        self._move_to(index % len(steps) if steps else 0)
        if index < 0:
            self.step = None  # follow new points

    def _move_to(self, index: int) -> None:
        steps, _ = self._points()
        if steps:
            self.step = steps[max(0, min(index, len(steps) - 1))]
            self._draw()

    def action_go_to(self) -> None:
        self.app.push_screen(GoToStepScreen(run_context(self).model.last_step), self._go_to)

    def _go_to(self, step: int | None) -> None:
        steps, _ = self._points()
        landed = None if step is None else landing_step(steps, step)
        if landed is not None:
            self._move_to(bisect_left(steps, landed))

    def action_open_step(self) -> None:
        index = self._cursor()
        if index is not None:
            run_context(self).open_step(self._points()[0][index])

    def _draw(self, opening: bool = False) -> None:
        """Build the figure again when its points, bands or size changed; move the cursor
        and retitle when the cursor or the findings did. ``opening``: the screen is being
        opened, and shows before its figure is built (``ChartPlot.draw``)."""
        run = run_context(self)
        steps, values = self._points()
        plot = self.query_one(ChartPlot)
        index = self._cursor()
        series = run.model.series.get(self.key)
        validation, _ = run.model.series_for(VALIDATION)
        # The plot spans the screen: before its first layout (``c`` opening the chart) the
        # screen's width is the one it will have, so the figure is built once, for it (built
        # for no width, the first ← built it again: a quarter of a second on 100k points).
        width = plot.size.width or self.app.size.width
        built = (self.key, id(series), len(steps), series.rewrites if series is not None else 0,
                 width, tuple(bands_for(self.key, run)),
                 (id(validation), len(validation), validation.rewrites) if validation is not None else None)
        if built != self._built:
            self._built = built
            self._build(plot, steps, values, width, opening)
        titled = (self.key, index, len(steps), built[3], id(run.findings))
        if titled != self._titled:
            self._titled = titled
            self.query_one(TitleBar).update(self._title(index))
        colours = self._colours()
        plot.show_cursor(None if index is None else steps[index],
                         values[index] if index is not None and math.isfinite(values[index]) else None,
                         colours["secondary"], colours["error"])

    def _build(self, plot: ChartPlot, steps: Steps, values: array, width: int,
               after_frame: bool) -> None:
        """The figure without the cursor: the curve, the rule bands, the validation points."""
        plt = plot.plt
        plt.clear_data()
        plt.xlabel("step")
        # The legend is a row of its own above the plot: plotext draws its legend over the
        # curve's top left corner, where a rising reward starts.
        legend: list[Content | tuple[str, str] | str] = []
        if steps:
            colours = self._colours()
            buckets = max(10, width - 12)  # the plot's columns, less the y axis
            xs, ys = envelope(steps, values, buckets)
            plt.plot(xs, ys, marker="braille", color=colours["primary"])
            legend += [("⣿ ", "$primary"), safe_text(self.key)]
            for label, level in bands_for(self.key, run_context(self)):
                plt.plot([steps[0], steps[-1]], [level, level], color=colours["warning"])
                legend += ["   ", ("── ", "$warning"), label]
            validation = self._mark_validation(plt, colours["accent"], buckets)
            if validation is not None:
                legend += ["   ", ("● ", "$accent"), safe_text(f"validation {validation}")]
            ticks = step_ticks(steps[0], steps[-1])
            plt.xticks([float(tick) for tick in ticks], [str(tick) for tick in ticks])
            # The newest point one column short of the frame: on it, the cursor's line beside
            # the frame's read as a doubled border.
            plt.xlim(steps[0], steps[-1] + max(1.0, 2 * (steps[-1] - steps[0]) / buckets))
        self.query_one("#chart-legend", Static).update(Content.assemble(*legend))
        plot.draw(after_frame=after_frame)

    def _mark_validation(self, plt: Plot, colour: tuple[int, int, int], buckets: int) -> str | None:
        """Mark the validation points: on a validation metric its own (sparse) points,
        on the train reward the validation score beside it (the same units, and the
        gap the val-gap rule judges). The key marked, or None."""
        model = run_context(self).model
        validation, val_key = model.series_for(VALIDATION)
        if validation is None or self.key not in (val_key, model.series_for(TRAIN_REWARD)[1]):
            return None
        xs, ys = envelope(validation.steps, validation.values, buckets)
        if not xs:
            return None
        plt.scatter(xs, ys, marker="●", color=colour)
        return val_key

    def _colours(self) -> dict[str, tuple[int, int, int]]:
        """The app theme's colours, as plotext takes them."""
        variables = self.app.theme_variables
        return {name: Color.parse(variables[name]).rgb
                for name in ("primary", "warning", "accent", "secondary", "error")}

    def _title(self, index: int | None) -> Content:
        # Which metric of which run: a chart opened from a tmux glance must say both. The
        # run's name goes last, where a narrow screen cuts first (the key and the cursor's
        # value matter more on this screen).
        head = Content.styled(safe_text(self.key), "bold $accent")
        run = Content.assemble(("  run ", "$text-muted"), safe_text(run_context(self).short_name))
        if index is None:
            return Content.assemble(head, "  ", ("no data yet", "$text-muted"), run)
        steps, values = self._points()
        step = steps[index]
        hits = [f for f in hits_at(run_context(self).findings, step) if f.metric == self.key]
        state = (Content.styled(f"{STATE_MARK[hits[0].severity]} {hits[0].rule}", level_style(hits[0]))
                 if hits else Content(""))
        return Content.assemble(head, f"  step {step} = ", (format_exact(values[index]), "bold"),
                                "  ", state, ("  " if hits else ""),
                                (f"point {index + 1} of {len(steps)}", "$text-muted"), run)
