"""A step's time split into its phases, as one proportional bar and a legend.

verl logs each phase's seconds as ``timing_s/<phase>`` (``timing/`` before
v0.2) next to the whole step's ``timing_s/step``. Where the phases add up to
less than the step, the rest is drawn as "other", so a slow step whose time
went nowhere named still shows it.
"""

from __future__ import annotations

from collections.abc import Mapping

from textual.content import Content
from textual.widget import Widget

from tui.parsers.text import safe_text
from tui.ui.format import format_number

PHASE_PREFIXES = ("timing_s/", "timing/")
# Distinct theme colours for the phases, in order of size; "other" is muted.
_COLOURS = ("$primary", "$accent", "$success", "$secondary", "$warning", "$error",
            "$primary-lighten-2", "$accent-lighten-2", "$success-lighten-2", "$secondary-lighten-2")
OTHER = "other"
# Unnamed time below this share of the step is rounding, not a phase.
_OTHER_MIN_SHARE = 0.01


def step_phases(metrics: Mapping[str, float]) -> tuple[list[tuple[str, float]], float | None]:
    """The step's phases, largest first, and the step's own seconds (None when not logged).

    A phase is a top-level ``timing_s/<name>``: nested keys (the agent loop's
    ``timing_s/agent_loop/…/mean``) are statistics, not phases, and
    ``timing_s/step`` is the whole.
    """
    phases: list[tuple[str, float]] = []
    total = None
    for key, value in metrics.items():
        prefix = next((p for p in PHASE_PREFIXES if key.startswith(p)), None)
        if prefix is None:
            continue
        name = key[len(prefix):]
        if name == "step":
            total = value
        elif "/" not in name and value > 0:  # also drops nan
            phases.append((name, value))
    phases.sort(key=lambda phase: -phase[1])
    named = sum(seconds for _, seconds in phases)
    if total is not None and total - named > _OTHER_MIN_SHARE * total:
        phases.append((OTHER, total - named))
    return phases, total


def allot(shares: list[float], width: int) -> list[int]:
    """Cells per share, summing to ``width`` (largest remainders round up)."""
    whole = sum(shares)
    if whole <= 0 or width <= 0:
        return [0] * len(shares)
    exact = [share / whole * width for share in shares]
    cells = [int(x) for x in exact]
    by_remainder = sorted(range(len(shares)), key=lambda i: cells[i] - exact[i])
    for i in by_remainder[: width - sum(cells)]:
        cells[i] += 1
    return cells


class PhaseBar(Widget):
    """The bar on the first line, the legend (name, seconds, share) wrapping below it."""

    DEFAULT_CSS = """
    PhaseBar {
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.phases: list[tuple[str, float]] = []
        self.total: float | None = None

    def show(self, metrics: Mapping[str, float]) -> None:
        """Take the phases from one step's metrics. The screen is laid out again only when
        the legend wraps to another number of lines (a layout repaints the whole screen)."""
        lines = self._lines()
        self.phases, self.total = step_phases(metrics)
        self.refresh()  # also drops the rendering and height kept for the old phases
        if self._lines() != lines:
            self.refresh(layout=True)

    def _lines(self) -> int | None:
        """How many lines the bar and its legend take at the present width (None: not laid out)."""
        width = self.content_region.width
        return self.get_content_height(self.size, self.size, width) if width > 0 else None

    def _colour(self, index: int, name: str) -> str:
        return "$text-muted" if name == OTHER else _COLOURS[index % len(_COLOURS)]

    def render(self) -> Content:
        if not self.phases:
            return Content.styled("no timing_s/ phases in this step", "$text-muted")
        whole = sum(seconds for _, seconds in self.phases)
        cells = allot([seconds for _, seconds in self.phases], max(1, self.size.width))
        bar = Content.assemble(*((("█" * count), self._colour(i, name))
                                 for i, ((name, _), count) in enumerate(zip(self.phases, cells))))
        legend = Content("  ").join(
            Content.assemble(("■ ", self._colour(i, name)), safe_text(name), " ",
                             (f"{format_number(seconds)}s", "bold"),
                             (f" {seconds / whole:.0%}", "$text-muted"))
            for i, (name, seconds) in enumerate(self.phases))
        title = Content.assemble(("time", "bold"), " ",
                                 (f"{format_number(self.total)}s" if self.total is not None
                                  else "(no timing_s/step)", "$text-muted"), "  ")
        return Content("\n").join([bar, Content.assemble(title, legend)])
