"""One metric of several runs in one plotext chart: a line per run, aligned by step.

Each run's series is smoothed (TensorBoard's EMA, ``tui.model.smoothing``) over
all its points first, then shrunk to the chart's columns with the lowest and
highest point of each (``envelope``), so smoothing never hides a spike that the
raw curve would show. The edges of the rule bands that judge the metric are
horizontal lines in the warning colour, as on the ``c`` chart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual_plotext import PlotextPlot

from tui.model.aliases import Concept
from tui.model.series import Series
from tui.model.smoothing import smooth
from tui.parsers.text import safe_text
from tui.ui.screens.chart import envelope, step_ticks

RGB = tuple[int, int, int]
# From this width on, the band lines are named in a legend box inside the chart.
LABELLED_FROM = 60


@dataclass(frozen=True)
class ChartLine:
    """One run's curve: its series (None: the run has no such metric), colour and marker."""

    name: str
    series: Series | None
    colour: RGB
    marker: str


class CompareChart(PlotextPlot):
    """The chart of one concept across the compared runs."""

    DEFAULT_CSS = """
    CompareChart { height: 1fr; width: 1fr; min-height: 8; }
    """

    def __init__(self, concept: Concept) -> None:
        super().__init__(id=f"compare-{concept.id}")
        self.concept = concept
        self._drawn: tuple | None = None

    def draw(self, lines: Sequence[ChartLine], bands: Sequence[tuple[str, float]],
             band_colour: RGB, weight: float) -> None:
        """Draw the runs' lines and the bands, unless nothing changed since the last draw."""
        signature = (tuple((line.name, id(line.series), len(line.series) if line.series else 0,
                            line.series.rewrites if line.series else 0, line.colour, line.marker)
                           for line in lines), tuple(bands), band_colour, weight, self.size)
        if signature == self._drawn:
            return
        self._drawn = signature
        plt = self.plt
        plt.clear_data()
        plt.title(self.concept.title)
        buckets = max(10, self.size.width - 12)  # the plot's columns, less the y axis
        first, last = None, None
        for line in lines:
            if line.series is None or not len(line.series):
                continue
            steps = line.series.steps
            xs, ys = envelope(steps, smooth(line.series.values, weight), buckets)
            if xs:
                plt.plot(xs, ys, marker=line.marker, color=line.colour)
                first = xs[0] if first is None else min(first, xs[0])
                last = xs[-1] if last is None else max(last, xs[-1])
        if first is not None and last is not None:
            ticks = step_ticks(first, last)  # whole steps, not plotext's even split (52.5)
            plt.xticks([float(tick) for tick in ticks], [str(tick) for tick in ticks])
            # Named in the chart's legend where it has room; a narrow chart keeps its lines clear.
            named = self.size.width >= LABELLED_FROM
            for label, level in bands:
                plt.plot([first, last], [level, level], color=band_colour,
                         label=safe_text(label) if named else None)
        self.refresh()
