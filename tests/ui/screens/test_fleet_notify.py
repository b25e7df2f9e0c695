"""The fleet screen's ``--notify``: each new critical finding it shows goes to the Apprise URLs too
(a real webhook on 127.0.0.1 receives it)."""

from __future__ import annotations

import asyncio

from tests.cli.test_watch import CRASH_EXCEPTION, Webhook
from tests.session.test_events import steps_then_crash
from tests.support import wait_for
from tui.cli.fleet import RunOptions, fleet_runs, listed_runs
from tui.cli.notify import Notifier, channels
from tui.rules.rule_file import load_rules
from tui.sources.ssh.pool import ConnectionPool
from tui.ui.fleet_app import FleetApp


async def test_a_crash_on_the_fleet_screen_is_sent_once(tmp_path):
    hook = Webhook()
    steps, crash = steps_then_crash()
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.log").write_bytes(steps)
    notifier = Notifier(channels([hook.url]), burst_s=0.2)
    pool = ConnectionPool()
    runs = fleet_runs(listed_runs([str(tmp_path / "*" / "train.log")]), pool,
                      RunOptions(None, load_rules(), notifier=notifier))
    app = FleetApp(runs)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_for(pilot, lambda: len(app.runs) == 2 and app.up_to_date and not app.loading,
                           "every row", timeout=15)
            with open(tmp_path / "b" / "train.log", "ab") as out:
                out.write(crash)
            await wait_for(pilot, lambda: not hook.received.empty(), "the message", timeout=20)
            sent = hook.next(0)
            assert sent["title"] == "rlwatch: b/train crashed"
            assert sent["message"] == f"b/train on local, step 4: crashed: {CRASH_EXCEPTION} (rank 1 on localhost)"
            await pilot.pause(1.0)
            assert hook.received.empty()  # judged again and again: told once
    finally:
        await asyncio.gather(*(run.close() for run in app.runs))
        await pool.close()
        await notifier.close()
        hook.close()
