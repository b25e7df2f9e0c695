"""The Textual application: a Feed in a worker, the dashboard screen, the keys.

Deliberately thin: widgets draw, screens arrange, and this class only wires
the source to the model and decides when to redraw.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.binding import Binding
from textual.driver import Driver
from textual.screen import Screen
from textual.theme import Theme
from textual.timer import Timer

from tui.accelerator_feed import feed_accelerators, runner_for_host, runner_for_source
from tui.alerts import CriticalAlerts, run_hook
from tui.feed import Feed
from tui.model.accelerators import AcceleratorHistory
from tui.model.run_model import RunModel
from tui.parsers.text import safe_text
from tui.rules.engine import RuleEngine
from tui.rules.findings import Finding
from tui.rules.rule_file import RuleSpec, load_rules
from tui.sources.base import LogSource, Reset, SourceError, Status
from tui.sources.run_folder import folder_for
from tui.ui.appearance import Appearance
from tui.ui.commands import RunCommands
from tui.ui.run_line import run_line, run_name
from tui.ui.screens.chart import ChartScreen
from tui.ui.screens.dashboard import DashboardScreen
from tui.ui.screens.failure import FailureScreen
from tui.ui.screens.findings import FindingsScreen
from tui.ui.screens.help import HelpScreen
from tui.ui.screens.processes import ProcessesScreen
from tui.ui.screens.report import ReportScreen
from tui.ui.screens.step_detail import StepDetailScreen
from tui.ui.screens.steps import StepsScreen
from tui.ui.terminal import TerminalExtras, rlwatch_driver

# Redraw at most this often: a backfill folds hundreds of chunks a second and
# drawing each would spend the time the scanner needs. Redraws are scheduled
# when something changed, not polled for: an idle dashboard left open for days
# wakes only for its clock and the accelerator readings.
REDRAW_SECONDS = 0.1
# And wait this many times as long as the last redraw took before the next:
# on a 100k-step run a redraw costs a few hundred milliseconds, and redrawing
# back to back would slow the backfill that is still coming in.
REDRAW_BACKOFF = 4
# The rules are judged again this often even when no byte arrives: a run that
# stops writing is exactly the one the stalled rule is for.
JUDGE_IDLE_SECONDS = 5.0
# At most this long judging per redraw, so keys stay responsive while a
# 100k-step backfill is judged over a few seconds.
JUDGE_BUDGET_SECONDS = 0.03


class RlwatchApp(App[None]):
    """The dashboard on one log source (already connected by the caller)."""

    TITLE = "rlwatch"
    COMMANDS = App.COMMANDS | {RunCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="quit rlwatch (the run itself is not touched)"),
        # Textual's own ctrl+q, described in rlwatch's words (its default text spoke of
        # "the app" and "the command prompt").
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True,
                tooltip="quit rlwatch (the run itself is not touched)"),
        Binding("question_mark", "help", "Help", key_display="?",
                tooltip="show the keys of this screen"),
        Binding("s", "steps", "Steps", tooltip="every step, newest first; enter opens one"),
        Binding("f", "findings", "Findings", tooltip="every finding of the health rules, newest first"),
        Binding("r", "report", "Report", tooltip="the end-of-run report of this run"),
        Binding("p", "processes", "Procs", tooltip="which processes hold each GPU/NPU"),
        # Textual adds its palette key with its own words unless the app names one.
        Binding("ctrl+p", "command_palette", "find", show=False, priority=True,
                tooltip="find any screen, metric or step by name"),
        Binding("t", "cycle_theme", "Theme", show=False,
                tooltip="the next colour theme (remembered for the next start)"),
    ]

    def __init__(self, source: LogSource, *, label: str | None = None, note: str | None = None,
                 rules: list[RuleSpec] | None = None, on_critical: str | None = None,
                 run_dir: Path | None = None, gpu_hosts: tuple[str, ...] = (),
                 watch_accelerators: bool = True, accept_new_host_key: bool = False,
                 name: str | None = None, appearance: Appearance | None = None) -> None:
        """``label`` names the run in the header (default: the source's label);
        ``note`` is shown in the status area at start (which log was chosen);
        ``rules`` are the health rules (default: the shipped ones); ``on_critical``
        is a shell command run with each new critical finding as JSON on stdin;
        ``run_dir`` is the run directory the user named, where the file logger's
        JSONL, TensorBoard events and dumps may lie beside the console log; ``gpu_hosts``
        are other nodes whose accelerators are shown beside the run's own host's
        (``watch_accelerators`` False: none at all, as in the demo); ``name`` is the
        run's short name in the terminal title (default: from the source's label);
        ``appearance`` is the theme, the themes ``t`` cycles and ASCII mode
        (default: the shipped dark theme, remembered nowhere)."""
        # Before Textual's __init__, which asks get_driver_class() for the driver.
        self.appearance = appearance or Appearance()
        super().__init__()
        self.short_name = name or run_name(source.label)
        self.engine = RuleEngine(rules if rules is not None else load_rules())
        self.alerts = CriticalAlerts()
        self.on_critical = on_critical
        self.findings: list[Finding] = []
        self._judged_at = 0.0
        self.source = source
        self.folder = folder_for(source, run_dir)
        self.model = RunModel(source.label)
        self.feed = Feed(source, self.model, on_change=self._model_changed,
                         on_status=self._source_event)
        self.accelerators = AcceleratorHistory()
        self.gpu_hosts = gpu_hosts
        self.watch_accelerators = watch_accelerators
        self.accept_new_host_key = accept_new_host_key
        self.dashboard = DashboardScreen(self.model, label or source.label, self.accelerators)
        self._accelerators_dirty = False
        self.note = note
        self._dirty = False
        self._drawing = False
        self._next_redraw_at = 0.0
        self._redraw_timer: Timer | None = None
        self._kept_screens: dict[type[Screen], Screen] = {}

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this platform, writing the title and, if asked, only ASCII."""
        return rlwatch_driver(super().get_driver_class(), self.appearance.ascii)

    def on_mount(self) -> None:
        for theme in self.appearance.themes:
            self.register_theme(theme)
        self.theme = self._remembered_theme = self.appearance.theme
        # Any switch, by ``t`` or by the command palette's theme picker, is remembered.
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        for problem in self.appearance.problems:
            # A theme file's path and error text: literal, never markup or terminal commands.
            self.notify(safe_text(problem), severity="warning", timeout=15, markup=False)
        self.push_screen(self.dashboard)
        if self.note:
            self.dashboard.show_status(self.note)
        self.set_interval(JUDGE_IDLE_SECONDS, self._judge_soon)
        self._wake()  # the first judgement, data or not
        self.run_worker(self._follow(), name="feed", group="feed")
        self.run_worker(self._follow_logger_files(), group="logger-files")
        if self.watch_accelerators:
            runner, host, local = runner_for_source(self.source)
            self.run_worker(self._follow_accelerators(runner, host, local), group="accelerators")
            for other in self.gpu_hosts:
                self.run_worker(self._follow_other_host(other), group="accelerators")

    async def _follow_accelerators(self, runner, host: str, local: bool) -> None:
        await feed_accelerators(runner, host, local, self.accelerators, self._accelerators_changed)

    async def _follow_other_host(self, host: str) -> None:
        try:
            runner = await runner_for_host(host, self.accept_new_host_key)
        except SourceError as error:
            self.accelerators.set_status(host, str(error), False, time.time())
            self._accelerators_changed()
            return
        await self._follow_accelerators(runner, host, False)

    def _accelerators_changed(self) -> None:
        self._accelerators_dirty = True
        self._wake()

    async def _follow(self) -> None:
        try:
            await self.feed.run(follow=True)
        except SourceError as error:
            self.dashboard.show_status(str(error), "error")

    async def _follow_logger_files(self) -> None:
        """Merge the run's JSONL and TensorBoard values too, where the log points at them."""
        if self.folder is None:
            return
        from tui.logger_feeds import logger_feeds

        try:
            feeds, notes = await logger_feeds(self.folder, self.model, self._model_changed)
        except SourceError as error:
            self.dashboard.show_status(f"the run's logger files were not read: {error}", "error")
            return
        for note in notes:
            self.dashboard.show_status(note, "notice")
        for feed in feeds:
            self.run_worker(self._follow_logger(feed), group="logger-files")

    async def _follow_logger(self, feed) -> None:
        try:
            await feed.run(follow=True)
        except SourceError as error:
            self.dashboard.show_status(str(error), "error")

    def _model_changed(self) -> None:
        self._dirty = True
        self._wake()

    def _source_event(self, event: Status | Reset) -> None:
        if isinstance(event, Reset):
            self.alerts.reset()
            self._dirty = True  # the model is empty now; show that before it refills
            self._wake()
            self.dashboard.show_status(event.reason, "notice")
        else:
            self.dashboard.show_status(event.text, "ok" if event.ok else "error")

    def _wake(self) -> None:
        """Have ``_redraw`` run once, soon: after REDRAW_SECONDS, or the back-off after a
        slow redraw (one that is drawing now schedules the next itself)."""
        if self._redraw_timer is None and not self._drawing:
            delay = max(REDRAW_SECONDS, self._next_redraw_at - time.monotonic())
            self._redraw_timer = self.set_timer(delay, self._redraw)

    def _judge_soon(self) -> None:
        """The rules again even when no byte arrives: a run that stops writing is exactly
        the one the stalled rule is for."""
        self._judged_at = 0.0
        self._wake()

    async def _redraw(self) -> None:
        self._redraw_timer = None
        if self._accelerators_dirty:
            self._accelerators_dirty = False
            self.dashboard.accelerators.show()
        started = time.monotonic()
        judgement_due = started - self._judged_at > JUDGE_IDLE_SECONDS
        if not self._dirty and not judgement_due:
            return
        dirty, self._dirty, self._drawing = self._dirty, False, True
        try:
            if dirty:
                await self.dashboard.show_model()
            self._judge()
        finally:
            self._drawing = False
            self._next_redraw_at = time.monotonic() + REDRAW_BACKOFF * (time.monotonic() - started)
            # What changed while drawing, and a big backfill still being judged, come next.
            if self._dirty or self._accelerators_dirty or self.engine.behind:
                self._wake()

    def _judge(self) -> None:
        """Evaluate the rules, show the result, and announce new critical findings once."""
        self.findings = self.engine.evaluate(self.model, time.time(), JUDGE_BUDGET_SECONDS,
                                             self.accelerators)
        # Still judging a big backfill: come back on the next tick, not in 5 s.
        self._judged_at = 0.0 if self.engine.behind else time.monotonic()
        self.dashboard.show_findings(self.findings)
        # The run's name is a (remote) file name: the title shows its controls, inert.
        self.title = safe_text(f"rlwatch {run_line(self.short_name, self.model, self.findings)}")
        fresh = self.alerts.new(self.findings)
        if not fresh:
            return
        self.bell()  # one BEL: tmux marks the window
        if self.on_critical:
            for finding in fresh:
                self.run_worker(self._hook(self.on_critical, finding), group="on-critical")

    async def _hook(self, command: str, finding: Finding) -> None:
        problem = await run_hook(command, finding, self.model.log)
        if problem:
            self.dashboard.show_status(problem, "error")

    def watch_title(self, title: str) -> None:
        """Put the title on the terminal's window (tmux: ``#T``, ``pane_title``)."""
        # Textual offers no public handle on its driver; App.bell() writes through it the same way.
        driver = self._driver
        if isinstance(driver, TerminalExtras):
            driver.set_title(title)

    def action_cycle_theme(self) -> None:
        """The next of the offered themes (shipped, then the user's), round and round."""
        names = [theme.name for theme in self.appearance.themes]
        at = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(at + 1) % len(names)]

    def _theme_changed(self, theme: Theme) -> None:
        if theme.name == self._remembered_theme:
            return
        self._remembered_theme = theme.name
        problem = self.appearance.remember(theme.name) if self.appearance.remember else None
        self.notify(safe_text(problem or f"theme {theme.name}"),
                    severity="warning" if problem else "information", timeout=8 if problem else 2,
                    markup=False)

    def _kept(self, kind: type[Screen], make: Callable[[], Screen]) -> Screen:
        """One screen of ``kind`` kept mounted between visits, so opening it again only shows
        it (composing a screen anew was most of what opening one cost); a fresh one where
        the kept one is already on the stack below (the step detail opened from a chart
        opened from the step detail)."""
        kept = self._kept_screens.get(kind)
        if kept is None:
            kept = self._kept_screens[kind] = make()
        elif kept in self.screen_stack:
            return make()
        return kept

    def action_findings(self) -> None:
        if not isinstance(self.screen, FindingsScreen):
            screen = self._kept(FindingsScreen, lambda: FindingsScreen(self.findings))
            screen.show_findings(self.findings)
            self.push_screen(screen)

    def action_processes(self) -> None:
        if not isinstance(self.screen, ProcessesScreen):
            self.push_screen(ProcessesScreen(self.accelerators))

    async def action_report(self) -> None:
        """The same report as ``rlwatch report``, for the run as it stands now."""
        if isinstance(self.screen, ReportScreen):
            return
        from tui.report.render import to_text
        from tui.report.samples import printed_samples
        from tui.report.verdict import build_report

        samples = await printed_samples(self.model, self.source)
        readings = [value for device in self.accelerators.devices()
                    for _, value in device.recent("util_pct", 7 * 24 * 3600)]
        report = build_report(self.model, self.findings, samples, target=None, utilisation=readings)
        self.push_screen(ReportScreen(to_text(report)))

    def action_help(self) -> None:
        """Every key the current screen answers to (its own, its focused widget's, the app's)."""
        if not isinstance(self.screen, HelpScreen):
            bindings = [active.binding for active in self.screen.active_bindings.values()]
            self.push_screen(HelpScreen(bindings, getattr(self.screen, "GUIDE", None)))

    def action_steps(self) -> None:
        if not isinstance(self.screen, StepsScreen):
            self.push_screen(self._kept(StepsScreen, StepsScreen))

    def action_dashboard(self) -> None:
        """Back to the dashboard from any depth."""
        while len(self.screen_stack) > 1 and self.screen is not self.dashboard:
            self.pop_screen()

    def open_step(self, step: int) -> None:
        """The detail of ``step``."""
        screen = self._kept(StepDetailScreen, lambda: StepDetailScreen(step))
        if screen.is_mounted:
            screen.show_step(step)
        self.push_screen(screen)

    def open_finding(self, finding: Finding) -> None:
        """Where ``finding`` happened: a failure (crash, error) opens the log at its byte
        offset; any other finding, the detail of the latest step it hit."""
        if finding.offset is not None:
            self.push_screen(FailureScreen(finding))
        elif finding.last_step is not None:
            self.open_step(finding.last_step)
        else:
            self.notify("This finding has no step or place in the log to open.", severity="warning")

    def open_chart(self, key: str, step: int | None = None) -> None:
        """``key`` charted over the whole run, the cursor on ``step`` (default: the newest)."""
        self.push_screen(ChartScreen(key, step))
