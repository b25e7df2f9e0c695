"""Accelerators over SSH, end to end: test sshds whose PATH holds a recorded nvidia-smi (what a
real H100 printed) or npu-smi (a real 910B4 box's table) fill check's list and drive the dashboard's
accelerator lines and processes screen, through the same connections a user's run gets."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from textual.widgets import DataTable

from tests.corpus import verl_log
from tests.sources.accelerators.conftest import H100_REAL, NPU_910B4_BUSY
from tests.sources.accelerators.replay import install
from tests.sshd import Sshd
from tests.support import dashboard_on, rlwatch_as, text_of, wait_for
from tui.parsers.log_scanner import NEEDLES
from tui.sources.accelerators.detect import NONE_FOUND, pollers_for, present
from tui.sources.accelerators.snapshot import take_snapshot
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget
from tui.ui.app import RlwatchApp
from tui.ui.screens.processes import ProcessesScreen


@pytest.fixture
def boxes(ssh_world, tmp_path) -> Iterator[Callable[[str, dict], str]]:
    """``boxes(tool, config)`` starts an sshd whose PATH holds ``tool`` replaying ``config``
    (and nothing else of the kind) and returns its alias in the client home.

    Every box gets an alias of its own: ssh config takes the first matching Host."""
    home, _, _ = ssh_world
    started: list[Sshd] = []

    def start(tool: str, config: dict) -> str:
        folder = tmp_path / f"box{len(started)}"
        install(folder / "bin", tool, config)
        box = Sshd(folder / "sshd", [home.public_key])
        with open(box.config, "a") as sshd_config:
            sshd_config.write(f"SetEnv PATH={folder / 'bin'}:/usr/bin:/bin\n")
        started.append(box.start())
        alias = f"{tool}-box{box.port}"
        home.add_host(alias, box.port)
        home.trust(box.known_hosts_line())
        return alias

    yield start
    for box in started:
        box.stop()


def test_check_reads_the_boxs_gpus_over_the_runs_connection(ssh_world, boxes):
    home, _, _ = ssh_world
    alias = boxes("nvidia-smi", H100_REAL)
    done = rlwatch_as(home, "check", f"{alias}:{verl_log('036')}", "--json")
    assert done.returncode == 2, done.stderr
    (gpu,) = json.loads(done.stdout)["accelerators"]
    assert gpu["host"] == alias and "H100" in gpu["name"]
    assert gpu["util_pct"] == 100 and gpu["mem_total_mib"] == 81559
    assert set(gpu) == {"host", "index", "uuid", "name", "util_pct", "mem_used_mib",
                        "mem_total_mib", "temp_c", "power_w"}


def strip_lines(app: RlwatchApp) -> list[str]:
    """The accelerator strip as drawn, a line per device, blanks squeezed."""
    return [" ".join(line.split()) for line in text_of(app.dashboard.accelerators).splitlines()]


async def test_the_dashboard_shows_each_boxs_devices_and_who_holds_them(boxes, client_home):
    """``rlwatch gpu:/log --gpus npu``: the run's box answers with a real H100's nvidia-smi, the
    other node with a real 910B4 pair's npu-smi; both show, with the values the tools printed."""
    gpu = boxes("nvidia-smi", H100_REAL)
    npu = boxes("npu-smi", NPU_910B4_BUSY)
    source = RemoteLog(RemoteTarget(gpu, str(verl_log("032"))), NEEDLES)
    await source.connect()
    app = dashboard_on(source, gpu_hosts=(npu,))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(strip_lines(app)) == 3, "three device lines", timeout=20)
        lines = strip_lines(app)
        # npu-smi's AICore 0 % and HBM 61825/65536 MB; the H100 at full load, 17485/81559 MiB.
        assert [line.split(" util ")[0] for line in lines] == [
            f"{npu}:0 910B4-1", f"{npu}:1 910B4-1", f"{gpu}:0 NVIDIA H100 80GB HBM3"]  # whole at 120 columns
        assert lines[0].endswith("0% mem 60.4/64.0G 40°C 78W")
        assert lines[1].endswith("0% mem 60.4/64.0G 41°C 78W")
        assert lines[2].endswith("100% mem 17.1/79.6G 63°C 697W")
        await wait_for(pilot, lambda: all(s.processes for s in app.session.accelerators.latest()),
                       "every device's processes", timeout=20)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessesScreen), "the processes screen")
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 3, "a process on each device")
        assert [[str(cell) for cell in table.get_row_at(row)] for row in range(3)] == [
            [npu, "0 910B4-1", "19334", "VLLMWorker_TP", "58,472 MiB"],
            [npu, "1 910B4-1", "19341", "VLLMWorker_TP", "58,472 MiB"],
            [gpu, "0 NVIDIA H100 80GB HBM3", "417", "/opt/torch/.venv/bin/python3", "17,476 MiB"]]
    await source.close()


async def test_the_boxs_tools_run_over_the_connection_the_log_has_now(client_home, tmp_path):
    """The log's source makes a new connection when it reconnects; the accelerator tools kept
    running over the one it had closed, and the box's devices were never read again."""
    log = tmp_path / "grpo.log"
    log.write_bytes(verl_log("032").read_bytes()[:4096])
    source = RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES)
    await source.connect()
    try:
        host = source.accelerator_host()
        await source.close()  # as a reconnect does: the old connection goes, a new one comes
        await source.connect()
        assert await host.runner.run(["echo", "devices"]) == b"devices\n"
    finally:
        await source.close()


async def test_the_box_is_asked_once_which_tools_it_has(boxes, client_home):
    """Trying each tool in turn cost a round trip apiece (four misses on a box without GPUs,
    about a second of ``check``): the box names its tools in one command, and only those run."""
    npu = boxes("npu-smi", NPU_910B4_BUSY)
    source = RemoteLog(RemoteTarget(npu, str(verl_log("032"))), NEEDLES)
    await source.connect()
    try:
        runner = source.accelerator_host().runner
        candidates = pollers_for(runner, local=False)
        assert [p.tool for p in await present(runner, candidates)] == ["npu-smi"]
        snapshot = await take_snapshot(runner, npu)
        assert snapshot.tool == "npu-smi" and len(snapshot.samples) == 2
        bare = RemoteLog(RemoteTarget("gpu", str(verl_log("032"))), NEEDLES)  # no tool at all
        await bare.connect()
        try:
            assert await present(bare.accelerator_host().runner, candidates) == []
            assert (await take_snapshot(bare.accelerator_host().runner, "gpu")).problem == NONE_FOUND
        finally:
            await bare.close()
    finally:
        await source.close()
