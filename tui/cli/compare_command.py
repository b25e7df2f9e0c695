"""``rlwatch compare A B …``: several runs' key metrics, numbers and differing settings.

Each target is read as ``rlwatch PATH`` reads one (local or remote, a log or a
run directory); all are connected before the screen opens, so a target that
cannot be read fails with one line on stderr and exit status 3, like the
dashboard. The runs are followed while the screen is open.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tui.cli import exit_codes
from tui.cli.dashboard import _appearance, _exit_on_hangup, _unreadable
from tui.cli.targets import local_run_dir, open_target
from tui.rules.rule_file import RuleFileError, load_rules, override_paths
from tui.session.run_mutes import RunMutes
from tui.session.run_session import RunSession
from tui.sources.base import SourceError

if TYPE_CHECKING:
    from tui.ui.appearance import Appearance


def run_compare(targets: Sequence[str], log: str | None = None, rules_file: str | None = None,
                accept_new_host_key: bool = False, theme: str | None = None,
                ascii_only: bool | None = None, mute: str | None = None) -> int:
    """The compare screen on ``targets``; returns the exit status. ``log``: ``--log``, the
    log to read in each run directory (a relative name is looked for in each); ``mute``:
    ``--mute RULE[,RULE…]``. Each run's state in the title honours the mutes, those given
    and those kept for the run from the dashboard's ``m``, as the dashboard's own header does."""
    if len(targets) < 2:
        print("rlwatch compare: name two or more runs to compare (rlwatch compare RUN_A RUN_B …)",
              file=sys.stderr)
        return exit_codes.USAGE
    appearance = _appearance(theme, ascii_only)
    if appearance is None:
        return exit_codes.USAGE
    try:
        rules = load_rules(*override_paths(rules_file), mute=mute)
        sessions = []
        for target in targets:
            opened = open_target(target, log, accept_new_host_key)
            # The accelerators are not compared: only the runs' own numbers are shown.
            sessions.append(RunSession(opened.source, rules=rules, run_dir=local_run_dir(target),
                                       note=opened.note, watch_accelerators=False,
                                       accept_new_host_key=accept_new_host_key,
                                       mutes=RunMutes(opened.source.label)))
        return asyncio.run(_compare(sessions, appearance))
    except (SourceError, RuleFileError) as error:
        return _unreadable(error)


async def _compare(sessions: list[RunSession], appearance: Appearance) -> int:
    from tui.ui.compare_app import CompareApp

    try:
        for session in sessions:
            session.note = await session.connect()
        app = CompareApp(sessions, appearance=appearance)
        _exit_on_hangup(app)
        await app.run_async()
    finally:
        for session in sessions:
            await session.close()
    return app.return_code or exit_codes.OK
