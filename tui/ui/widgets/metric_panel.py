"""One dashboard panel: a concept's latest value, its change, its range and its history.

The history is a sparkline where the panel is a few rows high (80×24, 120×40)
or one line (a small pane: the grid's compact layout, where the panel is its
name, its numbers and the sparkline on one line, no border), and a line chart
with a value and a step axis where it has room for one (200×50): a dozen rows of solid bars tell no more than one. The validation
panel of a run that validates on several data sets draws one line per set,
named in a legend row with each one's latest score.

Everything shown here that came from the log (the metric key, a data
source's name) is put on screen as literal Content, never parsed as markup:
log text is data.
"""

from __future__ import annotations

import math
from collections import Counter

from textual.app import ComposeResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Sparkline, Static

from tui.model.aliases import VALIDATION, Concept, validation_sources
from tui.model.run_model import RunModel
from tui.model.series import Series
from tui.parsers.text import safe_text
from tui.rules.findings import Finding, Severity
from tui.ui.format import format_delta, format_number
from tui.ui.health import STATE_MARK
from tui.ui.widgets.line_chart import LINE_STYLES, LineChart

# A panel whose history has this many rows (the step axis included) and columns
# draws a line chart; a smaller one, a sparkline.
CHART_MIN_ROWS = 6
CHART_MIN_COLUMNS = 24


class PanelStats(Widget):
    """The numbers line: value and Δ on the left, the run's min/max on the right.

    Laid out at render time from the actual width, so a narrow panel drops
    to a shorter range form instead of wrapping mid-number.
    """

    DEFAULT_CSS = """
    PanelStats {
        height: 1;
    }
    """

    value: reactive[str | None] = reactive(None)
    delta: reactive[str | None] = reactive(None)
    low_high: reactive[tuple[str, str] | None] = reactive(None)

    def render(self) -> Content:
        if self.value is None:
            return Content.styled("no data", "$text-disabled")
        left = Content.assemble((self.value, "bold $text"))
        if self.delta is not None:
            left = Content.assemble(left, "  ", ("Δ " + self.delta, "$text-muted"))
        if self.low_high is None:
            return left
        low, high = self.low_high
        room = self.size.width - left.cell_length - 2
        for right in (Content.assemble(("min ", "$text-muted"), low, ("  max ", "$text-muted"), high),
                      Content.assemble(low, ("‥", "$text-muted"), high)):
            if right.cell_length <= room:
                gap = " " * (self.size.width - left.cell_length - right.cell_length)
                return Content.assemble(left, gap, right)
        return left


class HistorySparkline(Sparkline):
    """The panel's sparkline, drawn again from the series when its own width changes: a
    panel switching to its compact line resizes the sparkline a frame after the panel, and
    points bucketed for the old width showed a different picture until the next step."""

    def on_resize(self) -> None:
        panel = self.parent
        if isinstance(panel, MetricPanel):
            panel.draw_history()


class MetricPanel(Widget, can_focus=True):
    """A bordered panel for one dashboard concept (train reward, entropy, …).

    Focusable, so ``c`` knows which metric to chart.
    """

    DEFAULT_CSS = """
    MetricPanel {
        height: 1fr;
        min-height: 4;
        padding: 0 1;
        border: round $secondary 60%;
        border-title-color: $text;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
    }
    MetricPanel.-empty {
        border: round $secondary 25%;
        border-title-color: $text-muted;
        border-title-style: none;
    }
    MetricPanel > Sparkline {
        height: 1fr;
        min-height: 1;
    }
    MetricPanel > Sparkline > .sparkline--max-color {
        color: $primary;
    }
    MetricPanel > Sparkline > .sparkline--min-color {
        color: $primary 45%;
    }
    MetricPanel > #legend {
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        display: none;
    }
    MetricPanel.-sources > #legend {
        display: block;
    }
    MetricPanel > LineChart {
        display: none;
    }
    MetricPanel.-chart > LineChart {
        display: block;
    }
    MetricPanel.-chart > Sparkline {
        display: none;
    }
    MetricPanel.-empty > Sparkline, MetricPanel.-empty > LineChart {
        display: none;
    }
    MetricPanel.-warning {
        border: round $warning;
        border-title-color: $warning;
    }
    MetricPanel.-critical {
        border: heavy $error;
        border-title-color: $error;
    }
    /* The focused panel keeps its state colour; its title reads reversed,
       which also shows without colour. Only the border changes: a lighter
       background would repaint every row of both panels, children included,
       a frame after the focus moved (an arrow key cost two frames). */
    MetricPanel:focus {
        border-title-style: bold reverse;
    }
    MetricPanel > #name {
        display: none;
    }
    """

    def __init__(self, concept: Concept, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="-empty")
        self.concept = concept
        self.key: str | None = None
        self._series: Series | None = None
        # (name, series) of each line the chart draws: the panel's own series, or one
        # per data source on a validation panel of a run that validates on several.
        self.lines: list[tuple[str, Series]] = []
        # The run's data sources with the number of keys they were found among: the
        # keys are looked through again only when a new one appears.
        self._sources: tuple[int, dict[str, str]] = (-1, {})
        self._health_shown: tuple[str | None, str] | None = None
        # What the panel last drew from (the series, its length, rewrites and
        # last point, the key, the run's last step, the other lines' lengths). An
        # unchanged signature means nothing to recompute: a 100k-step series is not
        # downsampled again because only the progress bar moved.
        self._drawn: tuple | None = None
        self.border_title = Content(concept.title)
        self.state: str | None = None

    def compose(self) -> ComposeResult:
        # The name and state a compact line shows in place of the border's title.
        yield Static(self._line_name(None), id="name", markup=False)
        yield PanelStats()
        yield Static(id="legend")
        yield HistorySparkline()
        yield LineChart()

    @property
    def charted(self) -> bool:
        """Whether the history is drawn as a line chart (the panel has room for one)."""
        return self.has_class("-chart")

    def show(self, model: RunModel) -> None:
        """Bring the panel up to date with the model (cheap when its series has not changed)."""
        series, key = model.series_for(self.concept)
        last = series.last() if series is not None else None
        lines = self._lines_of(model, series, key)
        signature = (id(series), len(series) if series is not None else 0,
                     series.rewrites if series is not None else 0, last, key, model.last_step,
                     tuple((id(line), len(line)) for _, line in lines))
        if signature == self._drawn:
            return
        stats = next(iter(self.query(PanelStats)), None)
        if stats is None:
            return  # not composed yet, or being torn down as the app exits
        self._drawn = signature
        self._series, self.key, self.lines = series, key, lines
        if series is None or last is None:
            self.set_class(True, "-empty")
            self.border_subtitle = None
            stats.value = stats.delta = stats.low_high = None
            return
        self.set_class(False, "-empty")
        self.border_subtitle = self._subtitle(key, last[0], model.last_step)
        previous = series.previous()
        stats.value = format_number(last[1])
        stats.delta = (format_delta(last[1] - previous[1])
                       if previous is not None and math.isfinite(previous[1]) else None)
        bounds = series.finite_range()
        stats.low_high = (None if bounds is None
                          else (format_number(bounds[0]), format_number(bounds[1])))
        self._choose_form()
        self._show_legend()
        self.draw_history()

    def _lines_of(self, model: RunModel, series: Series | None,
                  key: str | None) -> list[tuple[str, Series]]:
        """The lines to draw: one per data source where the validation panel's key is one
        of several sources' scores, else the panel's own series."""
        own = [(key or "", series)] if series is not None else []
        if self.concept is not VALIDATION or series is None:
            return own
        if self._sources[0] != len(model.series):
            self._sources = (len(model.series), validation_sources(model.series))
        sources = self._sources[1]
        if len(sources) < 2 or key not in sources.values():
            return own
        names = source_names(list(sources))
        lines = [(names[source], model.series[source_key])
                 for source, source_key in sources.items()]
        # The panel's own score first: it is the one the numbers line and the rules read.
        return sorted(lines, key=lambda line: line[1] is not series)

    def _show_legend(self) -> None:
        """Name each data source's line with its latest score (a legend row; only with
        several sources, and only where the panel has a row to spare)."""
        several = len(self.lines) > 1
        self.set_class(several and (self.charted or self.content_size.height >= 3), "-sources")
        if not several:
            return
        parts: list[Content] = []
        for number, (name, line) in enumerate(self.lines):
            last = line.last()
            value = format_number(last[1]) if last is not None else "–"
            mark = ("━ " if self.charted else "", LINE_STYLES[number % len(LINE_STYLES)])
            parts.append(Content.assemble(mark, (safe_text(name), "$text-muted"), " ", (value, "bold")))
        self.query_one("#legend", Static).update(Content("  ").join(parts))

    @property
    def series(self) -> Series | None:
        """The series the panel last drew."""
        return self._series

    def show_health(self, findings: list[Finding]) -> None:
        """Colour the panel and name the broken rule and number in its title.

        ``findings`` are the ones active on this panel's metric now (worst first).
        """
        worst = findings[0] if findings else None
        state = worst.severity if worst else None
        if worst is None:
            title = Content(self.concept.title)
        else:
            rule = f"{worst.rule}: {worst.reason}" if worst.reason else worst.rule
            title = Content.assemble(self.concept.title, "  ", (STATE_MARK[state], "bold"), " ", rule)
        # The rules are judged every few seconds; a panel whose state and title did not
        # change is left alone, since touching either repaints the whole panel.
        if (state, title.plain) == self._health_shown:
            return
        self._health_shown = (state, title.plain)
        self.state = state
        for name in self.query("#name").results(Static):
            name.update(self._line_name(state))
        self.set_class(state == Severity.WARNING, "-warning")
        self.set_class(state == Severity.CRITICAL, "-critical")
        self.border_title = title

    def _line_name(self, state: Severity | None) -> Content:
        """The compact line's name: the state's mark (so it reads without colour) and title."""
        mark = STATE_MARK[state].split()[0] + " " if state is not None else "  "
        return Content(mark + self.concept.title)

    @staticmethod
    def _subtitle(key: str | None, step: int, last_step: int | None) -> Content:
        """The key, literally (``safe_text``: shown, never obeyed), plus the step of the value when it lags the run (validation)."""
        text = Content(safe_text(key or ""))
        if last_step is not None and step != last_step:
            text = Content.assemble(text, f" @{step}")
        return text

    def draw_history(self) -> None:
        """Draw the history in the form the panel's size calls for: the line chart with every
        line, else the sparkline of the panel's own series, fit into its width (one bucket
        per column, spikes kept)."""
        if self._series is None:
            return
        if self.charted:
            self.query_one(LineChart).show([line for _, line in self.lines])
            return
        sparkline = next(iter(self.query(Sparkline)), None)
        if sparkline is None:
            return  # not composed yet, or being torn down as the app exits
        width = sparkline.size.width or self.size.width
        if width > 0:
            sparkline.data = self._series.downsample(width)

    def _choose_form(self) -> None:
        """A chart where the history has the room for one (``CHART_MIN_ROWS`` under the
        numbers and legend rows, ``CHART_MIN_COLUMNS`` wide), else a sparkline."""
        width, height = self.content_size
        legend = 1 if len(self.lines) > 1 else 0
        self.set_class(height - 1 - legend >= CHART_MIN_ROWS and width >= CHART_MIN_COLUMNS,
                       "-chart")

    def on_resize(self) -> None:
        self._choose_form()
        self._show_legend()
        # The sparkline or chart gets its new size in the same layout pass; draw once it has it.
        self.call_after_refresh(self.draw_history)


def source_names(sources: list[str]) -> dict[str, str]:
    """A short name for each data source: its last path part (``openai/gsm8k`` → ``gsm8k``)
    where that is unique among them, else the whole name."""
    short = {source: source.rsplit("/", 1)[-1] for source in sources}
    counts = Counter(short.values())
    return {source: name if counts[name] == 1 else source for source, name in short.items()}
