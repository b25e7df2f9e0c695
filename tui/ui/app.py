"""The Textual application: sessions followed in a worker, the dashboard screen, the keys.

Deliberately thin: a session (``tui.session``) owns the run, widgets draw,
screens arrange, and this class decides when to redraw and tells the screens
(``RunUpdated``).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from typing import TypeVar, cast

from textual.app import App
from textual.binding import Binding
from textual.driver import Driver
from textual.screen import Screen
from textual.theme import Theme
from textual.timer import Timer
from textual.widget import AwaitMount, Widget
from textual.worker import Worker

from tui.model.run_model import RunModel
from tui.parsers.text import safe_text
from tui.rules.engine import RuleEngine
from tui.rules.findings import Finding
from tui.session.run_session import RunChanged, RunSession
from tui.sources.base import LogSource
from tui.sources.run_folder import RunFolder
from tui.ui.appearance import Appearance
from tui.ui.commands import RunCommands
from tui.ui.messages import CompareRuns, RunUpdated
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
from tui.ui.screens.why_stuck import STALLED_KIND, WhyStuckScreen
from tui.ui.terminal import TerminalExtras, rlwatch_driver
from tui.ui.widgets.metric_panel import MetricPanel

# A screen the app keeps mounted between visits (steps, findings, the step detail).
KeptScreen = TypeVar("KeptScreen", bound=Screen)

# Redraw at most this often: a backfill folds hundreds of chunks a second and
# drawing each would spend the time the scanner needs. Redraws are scheduled
# when something changed, not polled for: an idle dashboard left open for days
# wakes only for its clock and the accelerator readings.
REDRAW_SECONDS = 0.1
# And wait this many times as long as the last redraw took before the next:
# on a 100k-step run a redraw costs a few hundred milliseconds, and redrawing
# back to back would slow the backfill that is still coming in.
REDRAW_BACKOFF = 4
# Once the backfill is in, new bytes (a log growing by 20 step lines a second) are
# drawn at most this often: a change after a quiet spell is drawn REDRAW_SECONDS after
# it, the ones streaming in behind it twice a second. Every redraw renders every panel
# and judges the run; ten a second took a sixth of a core on a 1,120-step run and a
# quarter on a 100,000-step one, for frames no one reads faster.
FOLLOW_REDRAW_SECONDS = 0.5
# The rules are judged again this often even when no byte arrives: a run that
# stops writing is exactly the one the stalled rule is for.
JUDGE_IDLE_SECONDS = 5.0
# At most this long judging per redraw, so keys stay responsive while a
# 100k-step backfill is judged over a few seconds.
JUDGE_BUDGET_SECONDS = 0.03


# How long quitting waits for a screen being composed ahead to finish (``_shutdown``): tens of
# milliseconds on an idle machine, but more than a second on a box whose cores a training job
# or a test run keeps busy, where a second's wait still ended the quit in Textual's traceback.
COMPOSE_AHEAD_WAIT_S = 5.0


# How often composing ahead looks whether every widget of the screen has run its mount.
MOUNT_SETTLE_POLL_S = 0.01


async def _mounted_whole(screen: Screen, mounting: Awaitable[None]) -> None:
    """``mounting`` (Textual's wait for ``screen`` itself), then every widget below it mounted
    as well: a screen counts as mounted before its grandchildren have run their own mount
    (the step detail's tab bar picks its first tab there), and quitting in between closed
    the tabs under it ('No Tab with id --content-tab-metrics')."""
    await mounting
    while not all(widget.is_mounted for widget in screen.walk_children(Widget, with_self=True)):
        await asyncio.sleep(MOUNT_SETTLE_POLL_S)


class RlwatchApp(App[None]):
    """The dashboard on a watched run (its session already connected by the caller)."""

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

    def __init__(self, sessions: Sequence[RunSession], *, name: str | None = None,
                 appearance: Appearance | None = None) -> None:
        """``sessions``: the runs to show, each connected by the caller (the dashboard shows
        the first; a fleet passes none and shows one at a time, ``show_session``); ``name``
        is the run's short name in the terminal title (default: from its log's label);
        ``appearance`` is the theme, the themes ``t`` cycles and ASCII mode (default: the
        shipped dark theme, remembered nowhere)."""
        # Before Textual's __init__, which asks get_driver_class() for the driver.
        self.appearance = appearance or Appearance()
        super().__init__()
        self.sessions = list(sessions)
        self._dashboards: dict[int, DashboardScreen] = {}
        self._kept_screens: dict[type[Screen], Screen] = {}
        self._redraw_timer: Timer | None = None
        self._drawing = False
        self._heap_frozen = False
        self._warmed = False
        # The screen composed ahead last (done once it is whole), for ``_shutdown`` to wait on.
        self._composing: asyncio.Future[None] | None = None
        if self.sessions:
            self.show_session(self.sessions[0], name)
            # Nothing to draw before the first change: the new dashboard shows an empty run.
            self._dirty = self._accelerators_dirty = False

    def show_session(self, session: RunSession, name: str | None = None) -> None:
        """Make ``session`` the one the dashboard and its screens show (its dashboard is
        kept between visits; the other screens are made anew for it)."""
        self.session = session
        self.short_name = name or run_name(session.source.label)
        dashboard = self._dashboards.get(id(session))
        if dashboard is None:
            dashboard = DashboardScreen(session.model, session.label, session.accelerators)
            self._dashboards[id(session)] = dashboard
        self.dashboard = dashboard
        self.workers.cancel_group(self, "warm")  # composing the last run's screens ahead
        self._drop_kept_screens()  # made for the run shown before
        self._judged_at = 0.0
        self._warmed = False  # its screens are composed once it is drawn and judged
        self._dirty = self._accelerators_dirty = True  # drawn at once, with all it holds
        self._next_redraw_at = 0.0
        self._last_redraw_at = 0.0
        self._backfilled = False  # its log read to the end it had (then FOLLOW_REDRAW_SECONDS)

    @property
    def showing_run(self) -> bool:
        """Whether a run is shown (always, but on a fleet's own screen)."""
        return True

    # What the screens read (``RunContext``): the shown session's parts.
    @property
    def model(self) -> RunModel:
        return self.session.model

    @property
    def findings(self) -> list[Finding]:
        return self.session.findings

    @property
    def engine(self) -> RuleEngine:
        return self.session.engine

    @property
    def source(self) -> LogSource:
        return self.session.source

    @property
    def folder(self) -> RunFolder | None:
        return self.session.folder

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
        self.start()

    def start(self) -> None:
        """Show the first run and follow it (a fleet starts on its own screen instead)."""
        self.push_screen(self.dashboard)
        if self.session.note:
            self.dashboard.show_status(self.session.note)
        self.set_interval(JUDGE_IDLE_SECONDS, self._judge_soon)
        self._wake()  # the first judgement, data or not
        # Called on this loop by the session's feeds: marks what to redraw, never draws.
        self.session.listen(self._run_changed)
        self.run_worker(self.session.follow(), name="session", group="session")

    def _run_changed(self, change: RunChanged) -> None:
        if change.notice is not None:
            self.dashboard.show_status(*change.notice)
        self._dirty = self._dirty or change.model
        self._accelerators_dirty = self._accelerators_dirty or change.accelerators
        if change.model or change.accelerators:
            self._wake(streaming=change.model and self._backfilled)
        self._backfilled = self._backfilled or change.caught_up

    def _wake(self, streaming: bool = False) -> None:
        """Have ``_redraw`` run once, soon: after REDRAW_SECONDS, or the back-off after a
        slow redraw (one that is drawing now schedules the next itself); for new bytes
        after the backfill (``streaming``), no sooner than FOLLOW_REDRAW_SECONDS after
        the last redraw began."""
        if self._redraw_timer is None and not self._drawing:
            now = time.monotonic()
            delay = max(REDRAW_SECONDS, self._next_redraw_at - now)
            if streaming:
                delay = max(delay, self._last_redraw_at + FOLLOW_REDRAW_SECONDS - now)
            self._redraw_timer = self.set_timer(delay, self._redraw)

    @property
    def up_to_date(self) -> bool:
        """Whether the screen shows the run as read so far, judged on all of it (nothing
        waiting to be drawn or judged)."""
        return (self._redraw_timer is None and not self._drawing and not self._dirty
                and self._judged_at > 0 and not self.session.engine.behind)

    def _judge_soon(self) -> None:
        """The rules again even when no byte arrives: a run that stops writing is exactly
        the one the stalled rule is for."""
        self._judged_at = 0.0
        self._wake()

    async def _redraw(self) -> None:
        self._redraw_timer = None
        accelerators, self._accelerators_dirty = self._accelerators_dirty, False
        if accelerators:
            self.dashboard.accelerators.show()
        started = time.monotonic()
        judgement_due = started - self._judged_at > JUDGE_IDLE_SECONDS
        if self._dirty or judgement_due:
            self._last_redraw_at = started
            dirty, self._dirty, self._drawing = self._dirty, False, True
            try:
                if dirty:
                    await self.dashboard.show_model()
                self._judge()
            finally:
                self._drawing = False
                self._next_redraw_at = time.monotonic() + REDRAW_BACKOFF * (time.monotonic() - started)
                # What changed while drawing, and a big backfill still being judged, come next.
                behind = self.session.engine.behind
                if self._dirty or self._accelerators_dirty or behind:
                    self._wake(streaming=self._backfilled and not behind)
        elif not accelerators:
            return
        # Every screen on the stack shows the run: one message tells them all, not a timer each.
        for screen in self.screen_stack:
            screen.post_message(RunUpdated())

    def _judge(self) -> None:
        """Judge the run, show the result, and announce new critical findings once."""
        findings = self.session.judge(time.time(), JUDGE_BUDGET_SECONDS)
        # Still judging a big backfill: come back on the next tick, not in 5 s.
        self._judged_at = 0.0 if self.session.engine.behind else time.monotonic()
        self.dashboard.show_findings(findings)
        if not self._warmed and not self.session.engine.behind:
            self._warmed = True
            self.call_after_refresh(self._start_warming)
        # The run's name is a (remote) file name: the title shows its controls, inert.
        self.title = safe_text(f"rlwatch {run_line(self.short_name, self.model, findings)}")
        if self.session.new_criticals():
            self.bell()  # one BEL: tmux marks the window

    def _freeze_heap(self) -> None:
        """Once the run is drawn and judged and its screens composed ahead, move every
        object alive then out of the cyclic collector's reach (``gc.freeze``): Python,
        Textual, the screens and the model, which live as long as the app. A full
        collection walks every object the collector tracks, and it took 50–160 ms on this
        app (a 10-step run as a 100,000-step one), landing in the middle of whichever key's
        frame allocated last (the keypress bench's slowest presses were those); frozen, the
        later full collections walk only what was made since. What is garbage already is
        collected first (once, before any key), so only live objects are frozen, and once
        per app: an object frozen and dropped later in a reference cycle waits for the
        app's end (``on_unmount``) to be collected."""
        if not self._heap_frozen:
            self._heap_frozen = True
            gc.collect()
            gc.freeze()

    def on_unmount(self) -> None:
        """The frozen objects go back to the collector as the app ends: a process that runs
        apps one after another (the tests, an embedding program) gets the last app's
        cycles back."""
        if self._heap_frozen:
            gc.unfreeze()

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

    def _kept(self, kind: type[KeptScreen], make: Callable[[], KeptScreen]) -> KeptScreen:
        """One screen of ``kind`` kept mounted between visits, so opening it again only shows
        it (composing a screen anew was most of what opening one cost); a fresh one where
        the kept one is already on the stack below (the step detail opened from a chart
        opened from the step detail). Installed, so that popping it does not remove it (an
        uninstalled screen loses its widgets when popped and is composed anew when pushed)."""
        kept = self._kept_screens.get(kind)
        if kept is None:
            made = make()
            self._kept_screens[kind] = made
            self.install_screen(made, name=f"kept-{kind.__name__}-{id(made)}")
            return made
        if kept in self.screen_stack:
            return make()
        return cast(KeptScreen, kept)

    def _start_warming(self) -> Worker[None]:
        """After the frame that shows the judged run (composing ahead must not hold it back);
        a screen that fails to compose ahead is composed when opened, as before. The worker
        is handed the method, which Textual calls and awaits, not a coroutine made now:
        cancelled before it starts (the app ending, another run shown), it leaves no
        coroutine never awaited."""
        return self.run_worker(self._warm_screens, group="warm", exit_on_error=False)

    async def _warm_screens(self) -> None:
        """Compose, off screen, the screens ``?``, ``s``, ``f``, ``enter`` and ``c`` open, once
        the run is drawn and judged: composing one on its first key was most of that key's
        time (a fifth of a second for the step detail). One at a time, so a key typed
        meanwhile waits for one screen at most. Textual composes a screen as it pushes it;
        this does the first part of a push (``_load_screen_css``, ``_register``: Textual's
        own, not public) without showing it, and nothing where this Textual lacks them."""
        register = getattr(self, "_register", None)
        load_css = getattr(self, "_load_screen_css", None)
        if register is None or load_css is None:
            self._freeze_heap()
            return
        model, dashboard = self.model, self.dashboard
        bindings = [active.binding for active in dashboard.active_bindings.values()]
        panel = dashboard.focused
        key = panel.key if isinstance(panel, MetricPanel) else None
        last = model.last_step
        wanted: list[tuple[type[Screen], Callable[[], Screen]]] = [
            (HelpScreen, lambda: HelpScreen(bindings, dashboard.GUIDE)),
            (StepsScreen, StepsScreen),
            (FindingsScreen, lambda: FindingsScreen(self.findings)),
        ]
        if last is not None:
            wanted.append((StepDetailScreen, lambda: StepDetailScreen(last)))
        if key is not None and key in model.series:
            wanted.append((ChartScreen, lambda: ChartScreen(key)))
        for kind, make in wanted:
            if kind in self._kept_screens or self.model is not model:
                continue  # opened by a key already, or another run is shown now
            screen = self._kept(kind, make)
            load_css(screen)
            # Kept (not cleared) when the worker is cancelled: Textual cancels every worker
            # as its message loop ends, before ``_shutdown`` looks for a compose to wait on.
            self._composing = asyncio.ensure_future(
                _mounted_whole(screen, AwaitMount(screen, register(self, screen))))
            await asyncio.shield(self._composing)  # cancelling the worker leaves it whole
        self._freeze_heap()  # the kept screens with the rest: they live as long as the run shown

    async def _compose_ahead_settled(self) -> None:
        """Stop composing ahead, and let the screen being composed finish, a few tens of
        milliseconds (at most ``COMPOSE_AHEAD_WAIT_S``): a screen still mounting when the app
        ends looked for its own children gone (the step detail ended in 'No Tab with id
        --content-tab-metrics' or ``NoMatches`` on its ``#rules``)."""
        self.workers.cancel_group(self, "warm")
        composing = self._composing
        if composing is not None:
            with suppress(Exception):
                await asyncio.wait_for(asyncio.shield(composing), COMPOSE_AHEAD_WAIT_S)

    async def action_quit(self) -> None:
        """Quit once the screen composed ahead is whole: Textual mounts nothing once ``exit``
        is called, so a screen whose compose began just before ``q`` got none of its widgets."""
        await self._compose_ahead_settled()
        self.exit()

    async def _shutdown(self) -> None:
        """The app ending another way (a test's app, a signal): Textual's shutdown closes every
        widget, so a screen composed ahead is let finish first."""
        await self._compose_ahead_settled()
        await super()._shutdown()

    def _drop_kept_screens(self) -> None:
        """Let go of the kept screens (a fleet shows another run): uninstalled and removed,
        each with its widgets, unless it is on the stack still."""
        for screen in self._kept_screens.values():
            if screen not in self.screen_stack:
                self.uninstall_screen(screen)
                if screen.is_running:
                    screen.remove()
        self._kept_screens.clear()

    def action_findings(self) -> None:
        if not isinstance(self.screen, FindingsScreen):
            screen = self._kept(FindingsScreen, lambda: FindingsScreen(self.findings))
            screen.show_findings(self.findings)
            self.push_screen(screen)

    def action_processes(self) -> None:
        if not isinstance(self.screen, ProcessesScreen):
            self.push_screen(ProcessesScreen(self.session.accelerators))

    async def action_report(self) -> None:
        """The same report as ``rlwatch report``, for the run as it stands now."""
        if isinstance(self.screen, ReportScreen):
            return
        from tui.report.render import to_text
        from tui.report.verdict import build_report

        samples = await self.session.printed_samples()
        readings = [value for device in self.session.accelerators.devices()
                    for _, value in device.recent("util_pct", 7 * 24 * 3600)]
        report = build_report(self.model, self.findings, samples, target=None, utilisation=readings)
        self.push_screen(ReportScreen(to_text(report)))

    def action_help(self) -> None:
        """Every key the current screen answers to (its own, its focused widget's, the app's)."""
        if not isinstance(self.screen, HelpScreen):
            bindings = [active.binding for active in self.screen.active_bindings.values()]
            guide = getattr(self.screen, "GUIDE", None)
            screen = self._kept(HelpScreen, lambda: HelpScreen(bindings, guide))
            screen.show(bindings, guide)
            self.push_screen(screen)

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
        else:  # still composing (ahead of its first key): it shows its step once mounted
            screen.step = step
        self.push_screen(screen)

    def toggle_mute(self, rule: str) -> None:
        """Mute or unmute ``rule`` on this run (remembered), then judge and show again."""
        try:
            muted = self.session.toggle_mute(rule)
        except OSError as error:
            muted = rule in self.session.engine.muted
            self.notify(f"{rule} {'muted' if muted else 'unmuted'} for now; not kept: "
                        f"{error.strerror or error}", severity="warning")
        else:
            self.notify(f"{rule} {'muted: shown, not counted' if muted else 'unmuted'} on this run")
        self._judge()
        for screen in self.screen_stack:
            if isinstance(screen, FindingsScreen):
                screen.show_findings(self.findings)

    def open_finding(self, finding: Finding) -> None:
        """Where ``finding`` happened: a failure (crash, error) opens the log at its byte
        offset; a stall, why it is stuck; any other finding, the detail of the latest step it hit."""
        if any(rule.id == finding.rule and rule.kind == STALLED_KIND for rule in self.engine.rules):
            self.open_why_stuck()
        elif finding.offset is not None:
            self.push_screen(FailureScreen(finding))
        elif finding.last_step is not None:
            self.open_step(finding.last_step)
        else:
            self.notify("This finding has no step or place in the log to open.", severity="warning")

    def open_why_stuck(self) -> None:
        """Why the run prints no new step: the stall's evidence, each item with its source."""
        if not isinstance(self.screen, WhyStuckScreen):
            self.push_screen(WhyStuckScreen(self.session.accelerators))

    def on_compare_runs(self, message: CompareRuns) -> None:
        """Several runs side by side (the fleet view's marked rows)."""
        if len(message.sessions) < 2:
            self.notify("Mark two or more runs to compare them.", severity="warning")
            return
        from tui.ui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(message.sessions))

    def open_chart(self, key: str, step: int | None = None) -> None:
        """``key`` charted over the whole run, the cursor on ``step`` (default: the newest)."""
        screen = self._kept(ChartScreen, lambda: ChartScreen(key, step))
        screen.show(key, step)
        self.push_screen(screen)
