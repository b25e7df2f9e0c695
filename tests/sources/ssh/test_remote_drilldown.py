"""The step detail of a remote run through the test sshd: its Dumps tab reads the box's dumps."""

from __future__ import annotations

from tests.ui.test_dashboard import text_of, wait_for
from tests.ui.test_drilldown import go_to_step, open_detail, open_steps, step_line, write_dumps
from tui.parsers.log_scanner import NEEDLES
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget
from tui.ui.app import RlwatchApp
from tui.ui.widgets.sample_card import SampleCard
from tui.ui.widgets.step_dumps import StepDumps


async def test_a_remote_steps_dumps_tab_shows_the_boxs_samples(client_home, tmp_path):
    (tmp_path / "grpo.log").write_bytes(b"".join(step_line(step) for step in range(1, 5)))
    write_dumps(tmp_path, 2)
    source = RemoteLog(RemoteTarget("gpu", str(tmp_path)), NEEDLES)
    await source.connect()
    app = RlwatchApp(source, watch_accelerators=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 4, "4 steps over ssh")
        await open_steps(pilot, app)
        await go_to_step(pilot, app, 2)
        await open_detail(pilot, app, 2)
        await pilot.press("d")
        dumps = app.screen.query_one(StepDumps)
        await wait_for(pilot, lambda: len(dumps.dumps) == 2, "both dumps read from the box")
        summary = text_of(dumps.query_one("#dump-summary"))
        assert "validation  1 samples" in summary and "rollout  4 samples" in summary
        await pilot.press("end")  # the worst rollout
        reader = dumps.query_one(SampleCard)
        await wait_for(pilot, lambda: "question 0" in text_of(reader), "the worst sample")
    await source.close()
