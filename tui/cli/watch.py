"""``rlwatch watch TARGET… --headless``: the fleet's sessions with no screen, telling events.

Made to be left running (in tmux, under nohup, as a systemd user service):
the runs are opened as the fleet opens them (``tui.cli.fleet``: paths,
``host:path``, globs, ``@group``, Ray and Slurm jobs; one SSH connection per
host; a run that cannot be read is tried again until it can, and a dropped
connection is resumed by the session itself), each run is judged once it
has been read to its end and again whenever it changes, and every run is
judged every JUDGE_EVERY_S seconds (a run that stops writing is what the
stall rule is for). What the judging turns up (``tui.session.events``) is
printed, one line per event (JSON lines with ``--json``), sent to the
``--notify`` channels, and kept per run in the user's state directory so a
restart tells nothing again.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from collections.abc import Callable, Sequence

from tui.cli import exit_codes
from tui.cli.fleet import RunOptions, fleet_runs, listed_runs
from tui.cli.notify import Notifier, NotifyUrlError, channels
from tui.cli.run_list import RunListError, wanted_runs
from tui.cli.watch_state import WatchState
from tui.config import load_config
from tui.parsers.text import safe_data, safe_text
from tui.rules.rule_file import RuleFileError, load_rules, override_paths
from tui.session.events import Announced, RunEvent, run_events
from tui.session.fleet import FleetRun
from tui.session.parse_pool import ParsePool
from tui.session.run_metrics import Sample, run_samples
from tui.session.run_session import RunChanged

# Every run is judged this often, changed or not (as the fleet screen does).
JUDGE_EVERY_S = 5.0
# A run that changed is judged this long after the change: a burst of lines is judged once.
SETTLE_S = 0.2
# A run whose crash waits for its exception line is judged again this long after the wait ends
# (a wake-up a hair early would find it still waiting).
_LATE_S = 0.01


def _say(text: str) -> None:
    print(f"rlwatch: {safe_text(text)}", file=sys.stderr, flush=True)


class Watcher:
    """Follows runs, judges them, and hands their new events to ``tell``."""

    def __init__(self, state: WatchState, tell: Callable[[list[RunEvent]], None], *,
                 warnings: bool = False, remind_s: float | None = None,
                 judge_every_s: float = JUDGE_EVERY_S, say: Callable[[str], None] = _say,
                 expose: Callable[[list[Sample]], None] | None = None,
                 parse_pool: ParsePool | None = None) -> None:
        """``expose``: given every run's metrics after each judging (``--metrics-port``);
        ``parse_pool``: the runs' parse workers, let go once every run has been read to its end
        (a watcher runs for days on what it follows then, a few lines at a time)."""
        self.runs: list[FleetRun] = []
        self._state = state
        self._tell = tell
        self._warnings = warnings
        self._remind_s = remind_s
        self._judge_every_s = judge_every_s
        self._say = say
        self._announced: dict[int, Announced] = {}
        self._read: set[int] = set()  # runs read to the end they had: judged from now on
        self._changed: set[int] = set()
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._problems: dict[int, str | None] = {}
        self._expose = expose
        self._parse_pool = parse_pool

    def add(self, run: FleetRun) -> None:
        """Watch ``run`` (its session opened, retried, followed in a task of its own)."""
        self.runs.append(run)
        self._announced[id(run)] = self._state.load(run.where)
        run.listen(self._on_change)
        task = asyncio.get_running_loop().create_task(self._follow(run))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _follow(self, run: FleetRun) -> None:
        await run.watch()
        if run.replaced_by is not None:  # a glob, now the runs it matches
            self.runs.remove(run)
            for match in run.replaced_by:
                self.add(match)

    @property
    def read(self) -> bool:
        """Whether every run has been read to the end its log had when opened (and is judged)."""
        return all(id(run) in self._read for run in self.runs)

    def _on_change(self, run: FleetRun, change: RunChanged) -> None:
        if change.reset:  # a new run in the same log: its crash, stall and end are news
            self._announced[id(run)] = Announced()
            self._keep(run)
        if change.caught_up:
            self._read.add(id(run))
            if self._parse_pool is not None and self.read:
                self._parse_pool.retire()
                self._parse_pool = None
        if change.notice is not None and change.notice[1] != "notice":
            self._say(f"{run.name} on {run.host}: {change.notice[0]}")
        problem = run.problem
        if problem != self._problems.get(id(run)) and problem is not None:
            self._say(f"{run.name} on {run.host}: {problem}")
        self._problems[id(run)] = problem
        if change.model or change.caught_up:
            self._changed.add(id(run))
            self._wake.set()

    async def run(self) -> None:
        """Judge until cancelled: the runs that changed soon after they do, a run whose crash
        waits for its exception line when the wait is over, all of them every ``judge_every_s``."""
        due = time.monotonic()
        while True:
            pause = due - time.monotonic()
            told_by = self._told_by()
            if told_by is not None:
                pause = min(pause, told_by - time.time() + _LATE_S)
            try:
                await asyncio.wait_for(self._wake.wait(), max(0.0, pause))
                await asyncio.sleep(SETTLE_S)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()
            every = time.monotonic() >= due
            if every:
                due = time.monotonic() + self._judge_every_s
            self.judge(None if every else set(self._changed) | self._overdue())

    def _told_by(self) -> float | None:
        """The soonest time (``time.time()``) a crash waiting for its exception line is to be told
        without it, if one is still to come."""
        now = time.time()
        times = [when for when in (announced.told_by() for announced in self._announced.values())
                 if when is not None and when > now]
        return min(times, default=None)

    def _overdue(self) -> set[int]:
        """The runs whose crash has waited its time for its exception line."""
        now = time.time()
        return {key for key, announced in self._announced.items()
                if (when := announced.told_by()) is not None and when <= now}

    def judge(self, only: set[int] | None = None) -> None:
        """Judge the runs read to their end (``only`` those ids), tell what is new, keep it."""
        now = time.time()
        if only is None:
            self._changed.clear()
        else:
            self._changed -= only
        told: list[RunEvent] = []
        for run in self.runs:
            session = run.session
            if session is None or id(run) not in self._read or (only is not None and id(run) not in only):
                continue
            session.judge(now)
            announced = self._announced[id(run)]
            events = run_events(run.name, run.host, session.model, session.findings, announced, now,
                                warnings=self._warnings, remind_s=self._remind_s)
            if events:
                self._keep(run)
                told += events
        if told:
            self._tell(told)
        if self._expose is not None:
            self._expose(self.samples(now))

    def samples(self, now: float) -> list[Sample]:
        """Every run's metrics as last judged (a run not read to its end yet: only whether it
        can be read)."""
        return [sample for run in self.runs for sample in run_samples(
            run.name, run.host, run.session.model if run.session is not None and id(run) in self._read else None,
            run.session.findings if run.session is not None else [],
            run.reach == "open" and run.problem is None, now)]

    def _keep(self, run: FleetRun) -> None:
        problem = self._state.save(run.name, run.host, run.where, self._announced[id(run)])
        if problem:
            self._say(problem)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(*(run.close() for run in self.runs), return_exceptions=True)


def printer(as_json: bool) -> Callable[[list[RunEvent]], None]:
    """What prints events: one line each, or one JSON object each."""
    def print_events(events: list[RunEvent]) -> None:
        for event in events:
            if as_json:
                print(json.dumps(safe_data(event.to_json()), ensure_ascii=False))
            else:
                print(f"{event.to_json()['time']} {event.kind:<8} {event.line()}")
        sys.stdout.flush()

    return print_events


def run_headless(words: list[str], log: str | None, rules_file: str | None, accept_new_host_key: bool,
                 as_json: bool, warnings: bool, notify: Sequence[str], remind_hours: float | None,
                 metrics_port: str | None = None, mute: str | None = None) -> int:
    """``watch --headless``: runs until interrupted or stopped (SIGTERM, SIGHUP); the exit status.
    ``mute``: --mute's rule ids, not told about on any run."""
    config = load_config()
    if config.problem:
        _say(config.problem)
    try:
        rules = load_rules(*override_paths(rules_file), mute=mute)
        wanted_runs(words)  # an unknown @name or a bad runs.toml: said before anything starts
        sending = channels([*notify, *config.notify])
    except (RuleFileError, RunListError, NotifyUrlError) as error:
        _say(str(error))
        return exit_codes.UNREADABLE
    if remind_hours is not None and not remind_hours > 0:  # nan too
        _say("--remind takes a number of hours above 0")
        return exit_codes.UNREADABLE
    options = RunOptions(log, rules, accept_new_host_key)
    remind_s = remind_hours * 3600 if remind_hours is not None else None
    expose = None
    if metrics_port is not None:
        from tui.cli.metrics import Snapshot, serve

        snapshot = Snapshot()
        try:
            server, _ = serve(snapshot, metrics_port)
        except (ValueError, OSError) as error:
            _say(f"--metrics-port {metrics_port}: {getattr(error, 'strerror', None) or error}")
            return exit_codes.UNREADABLE
        expose = snapshot.update
    try:
        return asyncio.run(_headless(words, options, as_json, warnings, Notifier(sending), remind_s, expose))
    finally:
        if metrics_port is not None:
            server.shutdown()


async def _headless(words: list[str], options: RunOptions, as_json: bool, warnings: bool,
                    notifier: Notifier, remind_s: float | None,
                    expose: Callable[[list[Sample]], None] | None) -> int:
    from tui.sources.ssh.pool import ConnectionPool

    show = printer(as_json)

    def tell(events: list[RunEvent]) -> None:
        show(events)
        notifier.add(events)

    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    for signum in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, main.cancel)
    pool = ConnectionPool(options.accept_new_host_key)
    parse_pool = ParsePool()
    parse_pool.start()
    watcher = Watcher(WatchState(), tell, warnings=warnings, remind_s=remind_s, expose=expose,
                      parse_pool=parse_pool)
    try:
        for run in fleet_runs(listed_runs(words), pool, options, parse_pool):
            watcher.add(run)
        await watcher.run()
    except asyncio.CancelledError:
        pass
    finally:
        await watcher.close()
        await notifier.close()
        await pool.close()
        parse_pool.close()
    return exit_codes.OK
