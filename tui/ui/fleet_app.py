"""The app on a fleet: the fleet screen first, each run's dashboard a key away.

It is the one-run app with many sessions: every run is followed in a worker
of its own (``FleetRun.watch``, which keeps trying a run that cannot be read),
each change marks its row to judge again, and the rows are redrawn at most
once a second. ``enter`` makes a run the shown session and pushes its
dashboard, where every key works as in ``rlwatch PATH``; ``escape`` comes
back. Runs whose host is the same share one accelerator history, so a change
there redraws the dashboard of any of them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from textual.binding import Binding
from textual.timer import Timer

from tui.parsers.text import safe_text
from tui.session.fleet import FleetRun
from tui.session.run_session import RunChanged
from tui.ui.app import JUDGE_BUDGET_SECONDS, JUDGE_IDLE_SECONDS, REDRAW_BACKOFF, RlwatchApp
from tui.ui.appearance import Appearance
from tui.ui.fleet_rows import FleetRow, fleet_line, fleet_row, row_order
from tui.ui.screens.fleet import FleetScreen

# The rows are redrawn at most this often: twenty runs backfilling at once change hundreds
# of times a second, and a row that says the same a second later loses nothing.
ROWS_SECONDS = 1.0
# Judging the runs that changed takes at most this long per redraw of the rows; the rest
# are judged at the next, which comes soon.
ROWS_JUDGE_BUDGET_SECONDS = 0.1
# Sooner than that for what the user waits on: a run just read to its end (its row now
# says what the run is) and runs left to judge. While runs are still being read, each
# redraw then waits ROWS_LOADING_SECONDS, or REDRAW_BACKOFF times as long as the last one
# took if that is longer, so twenty runs loading at once are not slowed by their rows; once
# all are in, the rest are judged and drawn back to back.
ROWS_SOON_SECONDS = 0.05
# A redraw's own time undercounts it: the table it changes is rendered after it, all of it
# (DataTable drops every cached cell at any change), ~10 ms for twenty rows. Drawn at every
# run read (before 1d37268: 16 redraws in a 20-run opening), those renders were a quarter of
# the event loop's time, which the loading runs wait on; four a second still show the rows
# filling in.
ROWS_LOADING_SECONDS = 0.25
# Actions of the one-run app that need a shown run: off on the fleet screen.
RUN_ACTIONS = frozenset({"steps", "findings", "report", "processes", "dashboard", "fleet"})


class FleetApp(RlwatchApp):
    """The fleet screen over ``runs``, each followed (and retried) in a worker."""

    BINDINGS = [
        *RlwatchApp.BINDINGS,
        Binding("escape", "fleet", "Fleet", tooltip="back to the fleet of runs"),
    ]

    def __init__(self, runs: Sequence[FleetRun], *, appearance: Appearance | None = None) -> None:
        super().__init__([], appearance=appearance)
        self.runs = list(runs)
        self.fleet = FleetScreen()
        self._stale = {id(run) for run in self.runs}  # to judge again before their rows are drawn
        self._rows_timer: Timer | None = None
        self._rows_due = 0.0  # when the rows timer fires (time.monotonic())
        self._rows_not_before = 0.0  # the back-off after the last redraw
        self._read: set[int] = set()  # the runs read to the end they had (``RunChanged.caught_up``)

    def start(self) -> None:
        self.push_screen(self.fleet)
        self._watch(self.runs)
        self.set_interval(JUDGE_IDLE_SECONDS, self._judge_all)
        self._rows_soon(ROWS_SOON_SECONDS)  # the runs listed at once, each row "opening"

    def _watch(self, runs: list[FleetRun]) -> None:
        for run in runs:
            run.listen(self._fleet_changed)
            self.run_worker(run.watch(), group="fleet")

    @property
    def showing_run(self) -> bool:
        """Whether a run's dashboard is on the screen stack (else the fleet alone is)."""
        return getattr(self, "dashboard", None) in self.screen_stack

    def _fleet_changed(self, run: FleetRun, change: RunChanged) -> None:
        if run.replaced_by is not None:  # a glob's box answered at last: its row is its runs now
            if run in self.runs:
                at = self.runs.index(run)
                self.runs[at:at + 1] = run.replaced_by
                self._stale.discard(id(run))
                self._stale.update(id(new) for new in run.replaced_by)
                self._watch(run.replaced_by)
                self._rows_soon()
            return
        if self.showing_run and run.session is not None:
            if run.session is self.session:
                self._run_changed(change)
            elif change.accelerators and run.session.accelerators is self.session.accelerators:
                self._accelerators_dirty = True
                self._wake()
        # A reading alone waits for the next round (JUDGE_IDLE_SECONDS): five hosts read every
        # 2 s would redraw the table every second of an idle fleet for a column of averages.
        if change.model or change.notice is not None or not change.accelerators:
            self._stale.add(id(run))
            if change.caught_up:
                self._caught_up(run)
            else:
                self._rows_soon()

    def _caught_up(self, run: FleetRun) -> None:
        """``run`` has been read to its end: judge it now, while the others still load (its
        share of the judging is then not left for after the last of them), and draw its row
        soon; the last run in clears the back-off, its row and any left to judge drawn now."""
        self._read.add(id(run))
        if _open(run):
            self._judge_run(run)
        if self.loading:
            self._rows_soon(ROWS_SOON_SECONDS)
        else:
            self._rows_not_before = 0.0
            self._rows_soon(0.0)

    def _wake(self, streaming: bool = False) -> None:
        if self.showing_run:
            super()._wake(streaming)

    def _judge_all(self) -> None:
        """Every run again, data or not: a run that stops writing is the one the stalled
        rule is for, and the rows' "last step" ages."""
        self._stale.update(id(run) for run in self.runs)
        self._rows_soon()
        if self.showing_run:
            self._judge_soon()

    def _rows_soon(self, delay: float | None = None) -> None:
        """Redraw the rows in ``delay`` seconds (default ROWS_SECONDS; no sooner than the last
        redraw's back-off), or when the redraw already due comes, if that is sooner."""
        due = max(time.monotonic() + (ROWS_SECONDS if delay is None else delay), self._rows_not_before)
        if self._rows_timer is not None:
            if self._rows_due <= due:
                return
            self._rows_timer.stop()
        self._rows_due = due
        self._rows_timer = self.set_timer(max(0.001, due - time.monotonic()), self._draw_rows)  # (0: Textual divides by it)

    @property
    def up_to_date(self) -> bool:
        """Whether every row was drawn from its run as read so far, judged on all of it."""
        return self._rows_timer is None and not self._stale

    def _draw_rows(self) -> None:
        """Judge the runs that changed (within a budget), then draw every row, worst first."""
        self._rows_timer = None
        started = time.monotonic()
        now = time.time()
        for run in self.runs:
            if id(run) in self._stale and _open(run):
                if time.monotonic() - started <= ROWS_JUDGE_BUDGET_SECONDS:
                    self._judge_run(run)
            elif id(run) in self._stale:
                self._stale.discard(id(run))
        rows = sorted(((run, self._row(run, now)) for run in self.runs),
                      key=lambda pair: row_order(pair[1]))
        self.fleet.show(rows)
        if not self.showing_run:
            self.title = safe_text(f"rlwatch {fleet_line([row for _, row in rows])}")
        took = time.monotonic() - started
        self._rows_not_before = (time.monotonic() + max(ROWS_LOADING_SECONDS, REDRAW_BACKOFF * took)
                                 if self.loading else 0.0)
        if any(id(run) in self._stale and _open(run) for run in self.runs):
            self._rows_soon(ROWS_SOON_SECONDS)  # the rest as soon as the back-off allows

    @property
    def loading(self) -> bool:
        """Whether a run that is open has not yet been read to its end (rows may be up to
        date meanwhile: drawn from what is read so far)."""
        return any(_open(run) and id(run) not in self._read for run in self.runs)

    def _judge_run(self, run: FleetRun) -> None:
        session = run.session
        assert session is not None
        session.judge(time.time(), JUDGE_BUDGET_SECONDS)
        if not session.engine.behind:  # else a big backfill, judged on over the next redraws
            self._stale.discard(id(run))
        if session.new_criticals():
            self.bell()  # one BEL: tmux marks the window, whichever run it was

    @staticmethod
    def _row(run: FleetRun, now: float) -> FleetRow:
        session = run.session
        if session is None:
            return fleet_row(run.name, run.host, None, [], None, run.problem, False, now)
        return fleet_row(run.name, run.host, session.model, session.findings, session.accelerators,
                         run.problem, run.reach == "open", now)

    def on_fleet_screen_opened(self, message: FleetScreen.Opened) -> None:
        self.open_run(message.run)

    def open_run(self, run: FleetRun) -> None:
        """Show ``run``'s dashboard (its session open), as ``rlwatch PATH`` would."""
        if run.session is None:
            return
        self.show_session(run.session, run.name)
        self.push_screen(self.dashboard)
        if run.note:
            self.dashboard.show_status(run.note)
        self._wake()

    def action_fleet(self) -> None:
        """Back to the fleet from a run's dashboard."""
        if self.screen is self.dashboard:
            self.pop_screen()
            self._judge_all()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The run's keys (steps, findings…) only where a run is shown; escape only on its
        dashboard (the screens above it have their own)."""
        if action in RUN_ACTIONS and not self.showing_run:
            return False
        return super().check_action(action, parameters)


def _open(run: FleetRun) -> bool:
    """Whether ``run`` is being read (a session, its source open): one to judge and to wait on."""
    return run.session is not None and run.reach == "open"
