"""``rlwatch PATH`` and ``rlwatch demo``: connect, then run the dashboard on the same event loop.

The source connects before the screen switches to the dashboard, so a target
that cannot be read fails with one line on stderr and exit status 3, like
``rlwatch check``. Textual is imported only here, inside the functions, so
``rlwatch --help`` and ``rlwatch check`` never load it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tui.cli import exit_codes
from tui.cli.targets import local_run_dir, open_target
from tui.rules.rule_file import RuleFileError, load_rules, override_paths
from tui.session.run_mutes import RunMutes
from tui.scratch import remove_all, scratch_dir
from tui.session.run_session import RunSession
from tui.sources.base import LogSource, SourceError

# Seconds a hang-up leaves Textual to shut down before the process ends itself.
HANGUP_GRACE_S = 2.0
HANGUP_STATUS = 128 + 1  # what a shell reports for a process ended by SIGHUP

if TYPE_CHECKING:
    from tui.cli.notify import Notifier
    from tui.sources.replay import Replay
    from tui.ui.appearance import Appearance


def run_dashboard(target: str, log: str | None, rules_file: str | None = None,
                  on_critical: str | None = None, accept_new_host_key: bool = False,
                  gpu_hosts: tuple[str, ...] = (), theme: str | None = None,
                  ascii_only: bool | None = None, mute: str | None = None,
                  notify: Sequence[str] = ()) -> int:
    """The dashboard on a log file or run directory; returns the exit status.

    ``theme`` and ``ascii_only`` are ``--theme`` and ``--ascii``/``--unicode``
    (None: not given; the settings file and the locale decide).
    """
    appearance = _appearance(theme, ascii_only)
    if appearance is None:
        return exit_codes.USAGE
    try:
        notifier = screen_notifier(notify)
    except ValueError as error:  # a URL Apprise cannot use
        print(f"rlwatch: {error}", file=sys.stderr)
        return exit_codes.UNREADABLE
    try:
        rules = load_rules(*override_paths(rules_file), mute=mute)
        opened = open_target(target, log, accept_new_host_key)
        session = RunSession(opened.source, rules=rules, run_dir=local_run_dir(target),
                             note=opened.note, gpu_hosts=gpu_hosts,
                             accept_new_host_key=accept_new_host_key, on_critical=on_critical,
                             mutes=RunMutes(opened.source.label))
        if notifier is not None:
            from tui.cli.fleet import Found
            from tui.cli.notify import notify_criticals
            from tui.cli.run_list import Wanted

            run = Found(Wanted(target))
            notify_criticals(notifier, run.name, run.host, session)
        return asyncio.run(_watch(session, appearance, notifier=notifier))
    except (SourceError, RuleFileError) as error:
        return _unreadable(error)


def screen_notifier(urls: Sequence[str]) -> Notifier | None:
    """The notifier of a screen's ``--notify`` URLs (only those: a screen opened on an old
    crashed run must not tell config.toml's channels again each time), or None for none;
    ValueError (NotifyUrlError) for a URL Apprise cannot use."""
    if not urls:
        return None
    from tui.cli.notify import Notifier, channels

    return Notifier(channels(urls))


def run_demo(speed: float, theme: str | None = None, ascii_only: bool | None = None) -> int:
    """The dashboard on the bundled real run, replayed at ``speed`` steps per second."""
    if not speed > 0:  # also catches nan
        print("rlwatch: --speed must be a positive number of steps per second", file=sys.stderr)
        return exit_codes.USAGE
    appearance = _appearance(theme, ascii_only)
    if appearance is None:
        return exit_codes.USAGE
    try:
        return asyncio.run(_demo(speed, appearance))
    except SourceError as error:
        return _unreadable(error)


async def _watch(session: RunSession, appearance: Appearance, name: str | None = None,
                 notifier: Notifier | None = None) -> int:
    from tui.ui.app import RlwatchApp

    try:
        session.note = await session.connect()
        app = RlwatchApp([session], name=name, appearance=appearance)
        _exit_on_hangup(app)
        await app.run_async()
    finally:
        await session.close()
        if notifier is not None:
            await notifier.close()
    return app.return_code or exit_codes.OK


async def _demo(speed: float, appearance: Appearance) -> int:
    from tui.data import demo_log
    from tui.sources.local_file import LocalFile
    from tui.sources.replay import Replay

    data = demo_log()
    with scratch_dir("rlwatch-demo-") as folder:
        replay = Replay(data, step_ends(data), Path(folder) / "grpo_deepseek7b.log", speed)
        replay.prime()
        writer = asyncio.create_task(replay.run())
        try:
            return await _watch(demo_session(replay, LocalFile(replay.path)), appearance,
                                name="demo")
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer


def demo_session(replay: Replay, source: LogSource) -> RunSession:
    """The session the demo watches: ``source`` reads the file ``replay`` writes.

    The replay's GPUs are not this machine's, so none are watched. Its run (verl ~0.2) printed
    no total, but the replay holds the whole run: its step lines are the total, handed to the
    session as a run that prints 'Total training steps' would, so the header shows step
    N/total and an ETA."""
    from tui.data import DEMO_LABEL

    label = f"{DEMO_LABEL}, replayed at {replay.speed:g} steps/s"
    return RunSession(source, label=label, watch_accelerators=False,
                      known_total=len(replay.step_ends))


def _appearance(theme: str | None, ascii_only: bool | None) -> Appearance | None:
    """The theme and glyphs for this run; None (after one line on stderr) for an unknown theme."""
    from tui.ui.appearance import AppearanceError, resolve_appearance

    try:
        return resolve_appearance(theme, ascii_only)
    except AppearanceError as error:
        print(f"rlwatch: {error}", file=sys.stderr)
        return None


class _Exits(Protocol):
    """An app that can be told to leave (the dashboard's, the compare screen's)."""

    def exit(self) -> None: ...


def _exit_on_hangup(app: _Exits) -> None:
    """Leave cleanly on SIGTERM, and surely when the terminal goes away (SIGHUP: a killed tmux
    server, a closed pane, a dropped SSH session).

    Python's default for both is to die on the spot, which would leave the
    terminal in raw mode and the demo's temporary log behind. After a hang-up
    the terminal is gone, and Textual's shutdown can block for ever handing
    its last bytes to its output thread (seen with PYTHONUNBUFFERED=1, which
    many ML images set); so the exit it starts is given HANGUP_GRACE_S, after
    which the process removes its scratch folders (``tui.scratch``) and ends
    with the shell's status for a hang-up.
    """
    loop = asyncio.get_running_loop()

    def hang_up() -> None:
        app.exit()
        timer = threading.Timer(HANGUP_GRACE_S, _end_after_hangup)
        timer.daemon = True
        timer.start()

    for name, handler in (("SIGHUP", hang_up), ("SIGTERM", app.exit)):
        number = getattr(signal, name, None)
        if number is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals on Windows loops
                loop.add_signal_handler(number, handler)


def _end_after_hangup() -> None:
    remove_all()
    os._exit(HANGUP_STATUS)


def step_ends(data: bytes) -> list[int]:
    """Where each step's line ends in ``data``, found by the real scanner."""
    from tui.parsers.log_scanner import LogScanner
    from tui.parsers.records import StepRecord

    scanner = LogScanner()
    records = scanner.feed(data) + scanner.finish()
    return sorted({record.end for record in records if isinstance(record, StepRecord)})


def _unreadable(error: SourceError | RuleFileError) -> int:
    print(f"rlwatch: {error}", file=sys.stderr)
    return exit_codes.UNREADABLE
