"""The step detail of a remote run through the test sshd: its Dumps tab reads the box's dumps."""

from __future__ import annotations

from tests.support import dashboard_on, first_steps, worst_sample_of_step_2, write_dumps
from tui.parsers.log_scanner import NEEDLES
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget


async def test_a_remote_steps_dumps_tab_shows_the_boxs_samples(client_home, tmp_path):
    first_steps(tmp_path, 4)
    write_dumps(tmp_path, 2)
    source = RemoteLog(RemoteTarget("gpu", str(tmp_path)), NEEDLES)
    await source.connect()
    app = dashboard_on(source, watch_accelerators=False)
    async with app.run_test(size=(120, 40)) as pilot:
        card = await worst_sample_of_step_2(pilot, app)
    assert "answer 0" in card and "ground truth" in card
    await source.close()
