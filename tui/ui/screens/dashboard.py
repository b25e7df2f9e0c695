"""The main screen: the run header over the grid of metric panels."""

from __future__ import annotations

import asyncio

from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget

from tui.model.accelerators import AcceleratorHistory
from tui.model.aliases import DASHBOARD_CONCEPTS
from tui.model.run_model import RunModel
from tui.rules.findings import Finding
from tui.rules import run_state as states
from tui.rules.eta import overdue_s
from tui.ui.health import active_on, run_state, worst_finding
from tui.ui.run_context import run_context
from tui.ui.screens.goto_step import GoToStepScreen, landing_step
from tui.ui.screens.help import PANEL_GUIDE
from tui.ui.widgets.accelerator_strip import AcceleratorStrip
from tui.ui.widgets.key_bar import KeyBar
from tui.ui.widgets.metric_grid import MetricGrid
from tui.ui.widgets.metric_panel import MetricPanel
from tui.ui.widgets.run_header import RunHeader, StatusKind


class DashboardScreen(Screen):
    """Shows one RunModel; the app tells it when the model changed."""

    BINDINGS = [
        Binding("c", "chart", "Chart", tooltip="the focused panel's metric over the whole run"),
        Binding("w", "why", "Why",
                tooltip="open what the header's verdict names: a crash's traceback, a stall's "
                        "evidence, else the worst finding's step"),
        # Offered while the run is stalled or overdue (``check_action``).
        Binding("h", "why_stuck", "Stuck?",
                tooltip="why the run prints no new step: the stall's evidence, each with its source"),
        Binding("g", "go_to", "Go to", show=False,
                tooltip="ask for a step number and open that step's detail"),
    ]
    GUIDE = PANEL_GUIDE
    # Textual repaints the whole screen when its focus moves; an arrow key changes two
    # panels' titles, which repaint themselves (48 kB written for 160×48 against a few).
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)

    def __init__(self, model: RunModel, label: str, accelerators: AcceleratorHistory) -> None:
        super().__init__()
        self.model = model
        self.accelerators = AcceleratorStrip(accelerators)
        # Made here, not in compose, so a status can be shown before the screen is mounted.
        self.header = RunHeader(label)
        self.grid = MetricGrid(DASHBOARD_CONCEPTS)
        self._findings: list[Finding] = []
        self._stuck = False  # stalled, or overdue: ``h`` is offered

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.grid
        yield self.accelerators
        yield KeyBar()

    async def show_model(self) -> None:
        """Redraw from the model, yielding between panels.

        Each panel downsamples its full series; on a 100k-step run that is a
        few tens of milliseconds, so keys are handled between panels rather
        than after all eight. The header goes last, so its step number never
        runs ahead of the panels.
        """
        for panel in self.grid.shown_panels():
            panel.show(self.model)
            await asyncio.sleep(0)
        self.header.show(self.model)

    def show_findings(self, findings: list[Finding]) -> None:
        """Colour each panel by the findings active on its metric; the header gets the verdict."""
        self._findings = findings
        for panel in self.grid.shown_panels():
            panel.show_health(active_on(findings, panel.key, panel.series))
        state = states.run_state(self.model, findings)
        self.header.show_health(*run_state(findings), over=state.over, state=state)
        facts = self.header.facts
        stuck = state == states.RunState.STALLED or (state == states.RunState.RUNNING and overdue_s(
            facts.last_step_at, facts.sec_per_it, self.header.clock(), facts.allowance) is not None)
        if stuck != self._stuck:
            self._stuck = stuck
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``h`` only where there is a stall to explain: a run stalled or overdue."""
        return self._stuck if action == "why_stuck" else True

    async def on_metric_grid_grown(self, event: MetricGrid.Grown) -> None:
        """The extra panels just came on screen: draw them now, not at the next step."""
        await self.show_model()
        self.show_findings(self._findings)

    def on_screen_resume(self) -> None:
        self.header.restart_clock()

    def show_status(self, text: str, kind: StatusKind = "ok") -> None:
        """Put a source event in the header's status area."""
        self.header.show_status(text, kind)

    def action_why(self) -> None:
        """Where the verdict in the header comes from (two keys to a crash: ``w``)."""
        worst = worst_finding(run_context(self).findings)
        if worst is None:
            self.notify("Every rule holds: nothing to open.")
        else:
            run_context(self).open_finding(worst)

    def action_why_stuck(self) -> None:
        """Why a stalled or overdue run prints no new step (or that it moves)."""
        run_context(self).open_why_stuck()

    def on_run_header_verdict_clicked(self) -> None:
        self.action_why()

    def action_go_to(self) -> None:
        self.app.push_screen(GoToStepScreen(self.model.last_step), self._go_to)

    def _go_to(self, step: int | None) -> None:
        landed = None if step is None else landing_step(self.model.every_step(), step)
        if landed is not None:
            run_context(self).open_step(landed)

    def action_chart(self) -> None:
        panel = self.focused
        if isinstance(panel, MetricPanel) and panel.key in self.model.series:
            run_context(self).open_chart(panel.key)
        else:
            self.notify("This panel has no logged metric to chart yet.", severity="warning")
