"""Accelerators over SSH: a box whose PATH holds a recorded nvidia-smi (what a real H100 printed)
fills check's list and drives the dashboard's accelerator lines and processes screen."""

from __future__ import annotations

import json

import pytest
from textual.widgets import DataTable

from tests.corpus import verl_log
from tests.sources.accelerators.conftest import H100_REAL
from tests.sources.accelerators.replay import install
from tests.sources.ssh.test_remote_check import rlwatch
from tests.sshd import Sshd
from tests.ui.test_dashboard import text_of, wait_for
from tui.parsers.log_scanner import NEEDLES
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget
from tui.ui.app import RlwatchApp
from tui.ui.screens.processes import ProcessesScreen


@pytest.fixture
def gpubox(ssh_world, tmp_path):
    """A second sshd whose PATH holds the replayed nvidia-smi: (client home, its alias).

    Each test's box gets an alias of its own: ssh config takes the first matching Host."""
    home, _, _ = ssh_world
    bin_dir = tmp_path / "bin"
    install(bin_dir, "nvidia-smi", H100_REAL)
    box = Sshd(tmp_path / "box", [home.public_key])
    with open(box.config, "a") as config:
        config.write(f"SetEnv PATH={bin_dir}:/usr/bin:/bin\n")
    box.start()
    alias = f"gpubox{box.port}"
    home.add_host(alias, box.port)
    home.trust(box.known_hosts_line())
    yield home, alias
    box.stop()


def test_check_reads_the_boxs_gpus_over_the_runs_connection(gpubox):
    home, alias = gpubox
    done = rlwatch(home, "check", f"{alias}:{verl_log('036')}", "--json")
    assert done.returncode == 2, done.stderr
    (gpu,) = json.loads(done.stdout)["accelerators"]
    assert gpu["host"] == alias and "H100" in gpu["name"]
    assert gpu["util_pct"] == 100 and gpu["mem_total_mib"] == 81559
    assert set(gpu) == {"host", "index", "uuid", "name", "util_pct", "mem_used_mib",
                        "mem_total_mib", "temp_c", "power_w"}


async def test_the_dashboard_shows_the_boxs_gpu_and_who_holds_it(gpubox, monkeypatch):
    home, alias = gpubox
    monkeypatch.setenv("HOME", str(home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    source = RemoteLog(RemoteTarget(alias, str(verl_log("032"))), NEEDLES)
    await source.connect()
    app = RlwatchApp(source)
    async with app.run_test(size=(120, 40)) as pilot:
        strip = app.dashboard.accelerators
        await wait_for(pilot, lambda: "H100" in text_of(strip), "the box's H100 line", timeout=20)
        line = text_of(strip)
        assert alias in line and "100%" in line and "/79.6G" in line
        await wait_for(pilot, lambda: any(s.processes for s in app.accelerators.latest()),
                       "the box's compute apps", timeout=20)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessesScreen), "the processes screen")
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, "the one process")
        assert [str(cell) for cell in table.get_row_at(0)] == [
            alias, "0 NVIDIA H100 80GB HBM3", "417", "/opt/torch/.venv/bin/python3", "17,476 MiB"]
    await source.close()
