"""Several runs at once: ``rlwatch A B …``, ``check A B --json`` and ``status A B``.

Every command here opens its runs the same way: the words become runs
(``tui.cli.run_list``: targets, ``@names`` from runs.toml, globs), remote
ones share one SSH connection per host (``tui.sources.ssh.pool``), and all
are read at once. A run that cannot be read is a row saying why, never the
end of the command: one host that is down must not hide the others.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.cli import exit_codes
from tui.cli.run_list import RunListError, Wanted, expand, globbed, wanted_runs
from tui.cli.targets import local_run_dir, open_target, pooled_target, ray_address, target_host
from tui.model.accelerators import AcceleratorHistory
from tui.parsers.text import safe_data, safe_text
from tui.rules.findings import worst_severity
from tui.rules.rule_file import RuleFileError, RuleSpec, load_rules, override_paths
from tui.session.fleet import FleetRun
from tui.session.parse_pool import ParsePool
from tui.session.run_mutes import RunMutes
from tui.session.run_session import RunSession
from tui.sources.base import SourceError
from tui.sources.ssh.target import parse_target
from tui.ui.run_line import run_name

if TYPE_CHECKING:
    from tui.cli.notify import Notifier
    from tui.sources.ssh.pool import ConnectionPool
    from tui.ui.appearance import Appearance
    from tui.ui.fleet_rows import FleetRow

LOCAL_HOST = "local"


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What the command line says about every run of the fleet."""

    log: str | None
    rules: list[RuleSpec]
    accept_new_host_key: bool = False
    on_critical: str | None = None
    # Where the screens send each new critical finding (--notify), if anywhere.
    notifier: Notifier | None = None


def host_of(target: str) -> str:
    """The host a target's run is on, as its row names it."""
    return target_host(target) or LOCAL_HOST


def _name(wanted: Wanted) -> str:
    if wanted.name:
        return wanted.name
    ray = ray_address(wanted.target)
    if ray is not None and ray.job:  # a Ray job: its id (the row's host is the head)
        return ray.job
    remote = parse_target(wanted.target)
    return run_name(remote.path if remote is not None else wanted.target)


def _where(run: Found) -> str:
    """The run's target in full, a local path made absolute (the same run wherever the
    command is started from)."""
    return os.path.abspath(run.wanted.target) if run.host == "local" else run.wanted.target


@dataclass(frozen=True, slots=True)
class Found:
    """A run the words name, or a glob that could not be expanded and why (its row says so),
    or (``unexpanded``) a glob the fleet screen expands once it is up."""

    wanted: Wanted
    failure: str | None = None
    unexpanded: bool = False

    @property
    def name(self) -> str:
        return _name(self.wanted)

    @property
    def host(self) -> str:
        return host_of(self.wanted.target)

    def check(self) -> None:
        """SourceError for a glob that could not be expanded."""
        if self.failure is not None:
            raise SourceError(self.failure)


def listed_runs(words: list[str]) -> list[Found]:
    """The runs ``words`` name, each glob left to expand on the fleet screen: the screen comes
    up while the boxes list their runs (a glob's row becomes its runs when its box answers)."""
    return [Found(run, unexpanded=globbed(run)) for run in wanted_runs(words)]


async def runs_of(words: list[str], pool: ConnectionPool) -> list[Found]:
    """The runs ``words`` name, globs expanded (all at once)."""
    wanted = wanted_runs(words)

    async def one(run: Wanted) -> list[Found]:
        if not globbed(run):
            return [Found(run)]
        try:
            return [Found(match) for match in await expand(run, pool)]
        except SourceError as error:
            return [Found(run, str(error))]

    found = await asyncio.gather(*(one(run) for run in wanted))
    return list(dict.fromkeys(run for runs in found for run in runs))


def fleet_runs(found: list[Found], pool: ConnectionPool, options: RunOptions,
               parse_pool: ParsePool | None = None) -> list[FleetRun]:
    """One FleetRun per run; the runs of one host share its accelerator readings (one poller
    per host: its GPUs are the same whichever run's row shows them), and all runs share
    ``parse_pool`` for their backfills. A glob whose box could not be asked is a row that
    asks again until it can, then becomes the runs it matches."""
    histories: dict[str, AcceleratorHistory] = {}

    def made(runs: list[Found]) -> list[FleetRun]:
        return [FleetRun(run.name, run.host, _opener(run, pool, options, histories, parse_pool),
                         _host_trouble(run.wanted.target, pool),
                         expand=_expander(run, pool, made) if run.failure or run.unexpanded else None,
                         where=_where(run))
                for run in runs]

    return made(found)


def _expander(glob: Found, pool: ConnectionPool, made: Callable[[list[Found]], list[FleetRun]]
              ) -> Callable[[], Awaitable[list[FleetRun]]]:
    async def expand_again() -> list[FleetRun]:
        return made([Found(match) for match in await expand(glob.wanted, pool)])

    return expand_again


def _opener(run: Found, pool: ConnectionPool, options: RunOptions,
            histories: dict[str, AcceleratorHistory], parse_pool: ParsePool | None
            ) -> Callable[[], RunSession]:
    def open_session() -> RunSession:
        run.check()
        target, host = run.wanted.target, run.host
        opened = open_target(target, options.log, options.accept_new_host_key, pool=pool)
        session = RunSession(opened.source, rules=options.rules, run_dir=local_run_dir(target),
                             note=opened.note, accept_new_host_key=options.accept_new_host_key,
                             on_critical=options.on_critical, watch_accelerators=host not in histories,
                             parse_pool=parse_pool, mutes=RunMutes(opened.source.label))
        session.accelerators = histories.setdefault(host, session.accelerators)
        if options.notifier is not None:
            from tui.cli.notify import notify_criticals

            notify_criticals(options.notifier, run.name, host, session)
        return session

    return open_session


def _host_trouble(target: str, pool: ConnectionPool) -> Callable[[], str | None]:
    remote = pooled_target(target)
    if remote is None:
        return lambda: None
    return lambda: pool.trouble(remote)


# rlwatch A B …: the fleet screen


def run_fleet(words: list[str], log: str | None, rules_file: str | None = None,
              on_critical: str | None = None, accept_new_host_key: bool = False,
              theme: str | None = None, ascii_only: bool | None = None,
              mute: str | None = None, notify: Sequence[str] = ()) -> int:
    """The fleet screen on the runs ``words`` name; returns the exit status."""
    from tui.cli.dashboard import _appearance, screen_notifier

    appearance = _appearance(theme, ascii_only)
    if appearance is None:
        return exit_codes.USAGE
    try:
        rules = load_rules(*override_paths(rules_file), mute=mute)
        wanted_runs(words)  # an unknown @name or a bad runs.toml: said before the screen
        notifier = screen_notifier(notify)
    except (RuleFileError, RunListError, ValueError) as error:
        print(f"rlwatch: {error}", file=sys.stderr)
        return exit_codes.UNREADABLE
    options = RunOptions(log, rules, accept_new_host_key, on_critical, notifier)
    return asyncio.run(_fleet(words, options, appearance))


async def _fleet(words: list[str], options: RunOptions, appearance: Appearance) -> int:
    from tui.cli.dashboard import _exit_on_hangup
    from tui.sources.ssh.pool import ConnectionPool
    from tui.ui.fleet_app import FleetApp

    pool = ConnectionPool(options.accept_new_host_key)
    parse_pool = ParsePool()
    parse_pool.start()  # while the screen starts and the globs are expanded
    app: FleetApp | None = None
    try:
        app = FleetApp(fleet_runs(listed_runs(words), pool, options, parse_pool), appearance=appearance)
        _exit_on_hangup(app)
        await app.run_async()
    finally:
        # The app's runs: a glob that was expanded late replaced its row with its runs.
        runs = app.runs if app is not None else []
        await asyncio.gather(*(run.close() for run in runs), return_exceptions=True)
        await pool.close()
        parse_pool.close()
        if options.notifier is not None:
            await options.notifier.close()
    return app.return_code or exit_codes.OK


# check A B [--json]


def checked_rules(words: list[str], rules_file: str | None,
                  mute: str | None = None) -> list[RuleSpec] | None:
    """The rules to judge ``words``' runs with (``mute``: --mute's rule ids), once the words are
    known to name runs (an unknown @name or a bad runs.toml); None once why not is said on
    stderr."""
    try:
        rules = load_rules(*override_paths(rules_file), mute=mute)
        wanted_runs(words)
    except (RuleFileError, RunListError) as error:
        print(f"rlwatch: {error}", file=sys.stderr)
        return None
    return rules


def run_check_fleet(words: list[str], log: str | None, as_json: bool, rules_file: str | None,
                    accept_new_host_key: bool, mute: str | None = None) -> int:
    """``check`` on several runs: a JSON array (or each run's summary), and the worst exit
    status of them all (3 when any could not be read)."""
    rules = checked_rules(words, rules_file, mute)
    if rules is None:
        return exit_codes.UNREADABLE
    results = asyncio.run(_check_all(words, RunOptions(log, rules, accept_new_host_key)))
    if as_json:
        print(json.dumps(safe_data([result for result, _, _ in results])))
    else:
        print(safe_text("\n\n".join(text for _, text, _ in results), multiline=True))
    return max(status for _, _, status in results)


async def _check_all(words: list[str], options: RunOptions) -> list[tuple[dict, str, int]]:
    from tui.sources.ssh.pool import ConnectionPool

    pool = ConnectionPool(options.accept_new_host_key)
    try:
        found = await runs_of(words, pool)
        return list(await asyncio.gather(*(_check_one(run, pool, options) for run in found)))
    finally:
        await pool.close()


async def _check_one(run: Found, pool: ConnectionPool, options: RunOptions
                     ) -> tuple[dict, str, int]:
    """One run's ``check --json`` object (with its name and host), its text, its status."""
    from tui.cli.check import judged, not_a_training_log, render_text, report

    wanted = run.wanted
    named = {"name": run.name, "host": run.host}
    try:
        run.check()
        session = await judged(wanted.target, options.log, options.accept_new_host_key,
                               options.rules, pool)
    except SourceError as error:
        return ({"target": wanted.target, **named, "error": str(error)},
                safe_text(f"{wanted.target}: {error}"), exit_codes.UNREADABLE)  # one line, names and all
    why = not_a_training_log(session.model)
    if why is not None:
        return {"target": wanted.target, **named, "error": why}, why, exit_codes.UNREADABLE
    readings = [sample.to_json() for sample in session.accelerators.latest()]
    result = report(wanted.target, session.model, session.findings, readings)
    return ({**result, **named}, render_text(result, session.model, session.findings),
            exit_codes.for_worst(worst_severity(session.findings)))


# status A B: one line for the whole fleet


def run_status_fleet(words: list[str], log: str | None, rules_file: str | None,
                     accept_new_host_key: bool, mute: str | None = None) -> tuple[str, int]:
    """The fleet's status line and exit status (the worst run's)."""
    try:
        rules = load_rules(*override_paths(rules_file), mute=mute)
        wanted_runs(words)
    except (RuleFileError, RunListError) as error:
        return f"rlwatch: {error}", exit_codes.UNREADABLE
    return asyncio.run(_status_all(words, RunOptions(log, rules, accept_new_host_key)))


async def _status_all(words: list[str], options: RunOptions) -> tuple[str, int]:
    from tui.cli.status_command import status_cache_dir, status_judged
    from tui.sources.ssh.pool import ConnectionPool
    from tui.ui.fleet_rows import fleet_line, fleet_row

    pool = ConnectionPool(options.accept_new_host_key)
    cache = status_cache_dir()

    async def one(run: Found) -> tuple[FleetRow, int]:
        name, host = run.name, run.host
        try:
            run.check()
            opened = open_target(run.wanted.target, options.log, options.accept_new_host_key, pool=pool)
            model, findings = await status_judged(opened, options.rules, cache)
        except SourceError as error:
            return (fleet_row(name, host, None, [], None, str(error), False, time.time()),
                    exit_codes.UNREADABLE)
        return (fleet_row(name, host, model, findings, None, None, True, time.time()),
                exit_codes.for_worst(worst_severity(findings)))

    try:
        done = await asyncio.gather(*(one(run) for run in await runs_of(words, pool)))
    finally:
        await pool.close()
    rows = [row for row, _ in done]
    return fleet_line(rows), max((status for _, status in done), default=exit_codes.OK)

