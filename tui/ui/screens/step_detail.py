"""The step detail (``enter`` on a step): its metrics, the rules it broke, its time, its text, its samples.

One screen shows one step at a time; ``[`` and ``]`` move it to the
neighbouring steps in place, so the open tab and the highlighted metric
stay where they were. The log text is fetched by byte range through the
source each time a step is shown, and nothing else of the log is read.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, TabbedContent, TabPane, Tabs
from textual.widgets._tabs import Underline
from textual.worker import Worker

from tui.model.aliases import STEP_TIME
from tui.model.series import Series
from tui.parsers.text import safe_text
from tui.rules.findings import Finding
from tui.rules.point_checks import POINT_CHECKS
from tui.rules.rule_file import RuleSpec
from tui.ui.format import format_duration, format_exact, format_number
from tui.ui.health import STATE_MARK, hits_at, level_style
from tui.ui.one_frame import one_frame
from tui.ui.run_context import RunContext, run_context
from tui.ui.screens.goto_step import GoToStepScreen, landing_step
from tui.ui.widgets.key_bar import KeyBar
from tui.ui.widgets.title_bar import TitleBar
from tui.ui.widgets.phase_bar import PhaseBar
from tui.ui.widgets.steady_text import SteadyText
from tui.ui.widgets.step_dumps import StepDumps
from tui.ui.widgets.step_log import StepLog
from tui.ui.widgets.step_metrics import StepMetrics

# tab id → the widget that takes the focus when it opens
_TAB_FOCUS: dict[str, type[Widget]] = {"metrics": StepMetrics, "log": StepLog, "dumps": DataTable}


def reason_at(finding: Finding, rule: RuleSpec | None, run: RunContext, step: int) -> str:
    """Why ``step`` broke the rule ("above 0.03"), judged again at that one point."""
    series = run.model.series.get(finding.metric or "")
    if rule is not None and rule.kind in POINT_CHECKS and series is not None:
        at = bisect_left(series.steps, step)
        if at < len(series) and series.steps[at] == step:
            return POINT_CHECKS[rule.kind](series.values, at, rule.params) or ""
    return finding.reason if finding.last_step == step else ""


class RunningTotal:
    """A series' finite values summed up to each point: how far into the run a step ended
    is one look-up per ``[``/``]`` rather than a sum over every step before it (100k on a
    week-long run). Taken in as the series grows; worked out again after a rewrite."""

    def __init__(self) -> None:
        self._of: tuple[int, int] | None = None
        self._sums = array("d")

    def upto(self, series: Series, step: int) -> float:
        """The sum of the series' finite values at steps up to ``step``."""
        if self._of != (id(series), series.rewrites):
            self._of, self._sums = (id(series), series.rewrites), array("d")
        sums, total = self._sums, (self._sums[-1] if self._sums else 0.0)
        for value in series.values[len(sums):]:
            if math.isfinite(value):
                total += value
            sums.append(total)
        at = bisect_right(series.steps, step)
        return sums[at - 1] if at else 0.0


class StepDetailScreen(Screen[None]):
    """Tabs for the step's metrics (with rules and time), its log text and its dumps."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", tooltip="back to the previous screen"),
        Binding("left_square_bracket", "neighbour(-1)", "Prev", key_display="[",
                tooltip="the previous step"),
        Binding("right_square_bracket", "neighbour(1)", "Next", key_display="]",
                tooltip="the next step"),
        Binding("g", "go_to", "Go to", tooltip="ask for a step number and show that step"),
        Binding("c", "chart", "Chart", tooltip="the highlighted metric over the whole run"),
        Binding("m", "tab('metrics')", "Metrics", tooltip="the step's metrics, rules and time"),
        Binding("l", "tab('log')", "Log", tooltip="the step's log text and printed samples"),
        Binding("d", "tab('dumps')", "Dumps", tooltip="the step's rollout and validation dumps"),
    ]
    GUIDE = (
        "The first row names the step (of the run's total), how long it took and how far "
        "into the run it ended, and the rules it broke; [ and ] move it in place. Metrics: "
        "every metric of the step grouped by prefix, its change since the previous step, "
        "the run's median and where the value came from (console, JSONL, TensorBoard), "
        "above them the rules it broke and its time by phase. Log: the text the step "
        "printed, read from the log by byte range. Dumps: its rollout and validation "
        "samples, best to worst."
    )
    # The tabs take the rest of the screen, so the title row stays on top: with the
    # tabs sized to their content the screen itself scrolled to the focused table and
    # pushed the title off.
    DEFAULT_CSS = """
    StepDetailScreen TabbedContent { height: 1fr; }
    StepDetailScreen ContentSwitcher { height: 1fr; }
    StepDetailScreen TabPane { padding: 0; height: 1fr; }
    StepDetailScreen #metrics-pane { height: 1fr; }
    StepDetailScreen #rules { height: auto; max-height: 40%; padding: 0 1; }
    """

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step = step
        self._elapsed = RunningTotal()
        # tab id → the step whose text or dumps it holds
        self._filled: dict[str, int] = {}

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with TabbedContent(initial="metrics"):
            with TabPane("Metrics", id="metrics"):
                with Vertical(id="metrics-pane"):
                    yield SteadyText(id="rules")
                    yield PhaseBar()
                    yield StepMetrics()
            with TabPane("Log", id="log"):
                yield StepLog()
            with TabPane("Dumps", id="dumps"):
                yield StepDumps()
        yield KeyBar()

    def on_mount(self) -> None:
        self.show_step(self.step)
        self.query_one(StepMetrics).focus()

    def show_step(self, step: int) -> None:
        """Show ``step``: its numbers now, its text or dumps (whichever tab is open) as read."""
        self.step = step
        run = run_context(self)
        model = run.model
        metrics = {key: value for key, series in model.series.items()
                   if (value := series.value_at(step)) is not None}
        hits = hits_at(run.findings, step)
        self.query_one(TitleBar).update(self._title(run, step, hits, self._elapsed))
        self.query_one("#rules", SteadyText).update(self._rules(run, step, hits))
        self.query_one(PhaseBar).show(metrics)
        self.query_one(StepMetrics).show_step(model, step)
        self._fill_tab(self.query_one(TabbedContent).active)

    def _fill_tab(self, tab: str) -> Worker | None:
        """Read the step's text or dumps into their tab when it is the one shown: the hidden
        tabs catch up when opened (mounting a step's text blocks and sample cards behind the
        metrics tab made every ``[`` and ``]`` lay the whole screen out again)."""
        if self._filled.get(tab) == self.step:
            return None
        run = run_context(self)
        worker = None
        if tab == "log":
            model = run.model
            sources = {series.source_at(self.step) for series in model.series.values()}
            origin = ", ".join(sorted(source.label for source in sources if source is not None))
            worker = self.run_worker(self.query_one(StepLog).show_step(
                run.source, model.step_index.span(self.step), origin),
                exclusive=True, group="step-log")
        elif tab == "dumps":
            worker = self.run_worker(self.query_one(StepDumps).show_step(run.folder, self.step),
                                     exclusive=True, group="step-dumps")
        self._filled[tab] = self.step
        return worker

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._fill_tab(event.tabbed_content.active)

    @staticmethod
    def _title(run: RunContext, step: int, hits: list[Finding], elapsed: RunningTotal) -> Content:
        """``step 34 of 1120  81.3 s/it  at 45m12s  ✓ ok``: which step, of how many, how long
        it took, how far into the run it ended (the sum of step times up to it)."""
        model = run.model
        of = (f" of {model.total_steps}" if model.total_steps else
              f" of {model.last_step} so far" if model.last_step is not None else "")
        parts = [Content.assemble((f"step {step}", "bold"), (of, "$text-muted"))]
        seconds, _ = model.series_for(STEP_TIME)
        value = seconds.value_at(step) if seconds is not None else None
        if seconds is not None and value is not None:
            parts.append(Content.assemble((format_number(value), "bold"), " s/it"))
            parts.append(Content.assemble(("at ", "$text-muted"),
                                          format_duration(elapsed.upto(seconds, step))))
        severity = hits[0].severity if hits else None
        style = level_style(hits[0]) if hits else "$success"
        count = f" {len(hits)} rule{'s' * (len(hits) != 1)} broken" if hits else ""
        parts.append(Content.styled(STATE_MARK[severity] + count, style))
        return Content("  ").join(parts)

    @staticmethod
    def _rules(run: RunContext, step: int, hits: list[Finding]) -> Content:
        """A line per rule the step broke: the rule, the metric's value, why, and what it means."""
        if not hits:
            return Content.styled("No rule broken at this step.", "$text-muted")
        rules = {rule.id: rule for rule in run.engine.rules}
        lines = []
        for finding in hits:
            rule = rules.get(finding.rule)
            style = level_style(finding)
            series = run.model.series.get(finding.metric or "")
            value = series.value_at(step) if series is not None else None
            what = safe_text(f"{finding.metric} = {format_exact(value)}") if value is not None else ""
            reason = reason_at(finding, rule, run, step)
            lines.append(Content.assemble((STATE_MARK[finding.severity], style), " ",
                                          (finding.rule, "bold"), "  ", what,
                                          (safe_text(f": {reason}") if reason else "", style)))
            if rule is not None:
                lines.append(Content.styled(f"    {rule.explain}", "$text-muted"))
        return Content("\n").join(lines)

    def action_neighbour(self, direction: int) -> None:
        """Move to the previous or next step of the run (skipping none, adding none)."""
        steps = run_context(self).model.every_step()
        at = (bisect_left(steps, self.step) - 1 if direction < 0
              else bisect_right(steps, self.step))
        if 0 <= at < len(steps):
            self.show_step(steps[at])

    def action_go_to(self) -> None:
        self.app.push_screen(GoToStepScreen(run_context(self).model.last_step), self._go_to)

    def _go_to(self, step: int | None) -> None:
        landed = None if step is None else landing_step(run_context(self).model.every_step(), step)
        if landed is not None:
            self.show_step(landed)

    def action_chart(self) -> None:
        key = self.query_one(StepMetrics).highlighted_key
        if key is not None:
            run_context(self).open_chart(key, self.step)

    def on_step_metrics_selected(self, event: StepMetrics.Selected) -> None:
        event.stop()
        run_context(self).open_chart(event.key, self.step)

    async def action_tab(self, tab: str) -> None:
        """Open ``tab`` in one frame: the tab, its underline, the focus and, when it is read
        in time, its text (Textual moves the underline and the focus a frame later, and
        the text came a frame after that)."""
        async with one_frame(self) as frame:
            self.query_one(TabbedContent).active = tab
            self._underline(tab)
            frame.focus(self.query_one(f"#{tab}", TabPane).query_one(_TAB_FOCUS[tab]))
            frame.wait_for(self._fill_tab(tab))

    def _underline(self, tab: str) -> None:
        """Put the tab underline under ``tab`` now, where Textual's ``Tabs`` puts it after
        the next frame (its own move then finds it there and draws nothing)."""
        tabbed = self.query_one(TabbedContent)
        active = tabbed.get_tab(tab)
        # Textual exports no name for the underline widget; it is the bar the Tabs draw.
        underline = tabbed.query_one(Tabs).query_one(Underline)
        underline.highlight_start, underline.highlight_end = (
            active.virtual_region.shrink(active.styles.gutter).column_span)
