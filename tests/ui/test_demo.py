"""The demo's path: the bundled run replayed into a file that the real app follows."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib

from tests.support import dashboard_on, panel, shown_step, stats_text, wait_for
from tui.ui.app import RlwatchApp
from tui.cli.dashboard import demo_session, step_ends
from tui.data import demo_log
from tui.sources.local_file import LocalFile
from tui.sources.replay import BURST_STEPS, Replay

# SOURCE.md's checksum of corpus 032: the bundle is that run, unchanged.
DEMO_SHA256 = "a78ca5c310356339eeb7a5775002111b7d9e191654c324b604d20651209a49a7"


def test_bundled_demo_is_the_documented_run():
    data = demo_log()
    assert hashlib.sha256(data).hexdigest() == DEMO_SHA256
    assert len(step_ends(data)) == 1120  # 1,119 training steps and the final val-only step


async def test_replay_fills_at_once_then_runs_to_the_end(tmp_path):
    data = demo_log()
    replay = Replay(data, step_ends(data), tmp_path / "demo.log", speed=2000)
    replay.prime()
    app = dashboard_on(LocalFile(replay.path, poll_seconds=0.05), label="demo")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == str(BURST_STEPS), "the first burst of steps")
        assert stats_text(app, "reward").strip() != "no data"

        writer = asyncio.create_task(replay.run())
        try:
            await wait_for(pilot, lambda: app.model.finished, "the replay to reach the end", timeout=10)
            await wait_for(pilot, lambda: shown_step(app) == "1120", "the last step on screen")
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer
        assert replay.path.read_bytes() == data  # every byte, chatter included, in order
        assert "finished" in app.dashboard.header.render().plain
        assert len(panel(app, "reward").query_one("Sparkline").data) > 20


async def test_the_demo_header_shows_the_whole_runs_total_and_an_eta(tmp_path):
    """Corpus 032 never printed its total; the replay holds the whole run, so the demo's header
    reads like a run that printed 'Total training steps': step N/1120 and an ETA."""
    data = demo_log()
    replay = Replay(data, step_ends(data), tmp_path / "demo.log", speed=8)
    replay.prime()
    app = RlwatchApp([demo_session(replay, LocalFile(replay.path, poll_seconds=0.05))], name="demo")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == f"{BURST_STEPS}/1120",
                       "the first burst of steps, out of the whole run's total")
        header = app.dashboard.header.render().plain
        assert "ETA" in header and "ETA —" not in header
