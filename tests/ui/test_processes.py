"""The processes screen (``p``): who holds each device, from recorded real nvidia-smi output."""

from __future__ import annotations

import socket
import time

from textual.widgets import DataTable

from tests.sources.accelerators.conftest import H100_MIG
from tests.sources.accelerators.replay import install, path_with
from tests.ui.test_dashboard import open_app, step_lines, text_of, wait_for
from tui.model.accelerators import AcceleratorHistory
from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample
from tui.ui.app import RlwatchApp
from tui.ui.screens.dashboard import DashboardScreen
from tui.ui.screens.processes import ProcessesScreen, process_rows


def rows_of(app: RlwatchApp) -> list[list[str]]:
    table = app.screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(row)] for row in range(table.row_count)]


def log_with_steps(tmp_path):
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(3)))
    return log


async def test_p_lists_the_processes_on_a_recorded_h100(tmp_path, monkeypatch):
    install(tmp_path / "bin", "nvidia-smi", H100_MIG)  # a real H100's gpu_burn and memhogs
    monkeypatch.setenv("PATH", path_with(tmp_path / "bin"))
    app = open_app(log_with_steps(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: any(s.processes for s in app.accelerators.latest()),
                       "the compute-apps reading", timeout=20)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessesScreen), "the processes screen")
        await wait_for(pilot, lambda: app.screen.query_one(DataTable).row_count == 3, "three rows")
        rows = rows_of(app)
        assert [row[2] for row in rows] == ["21180", "21181", "21198"]
        assert rows[2][3] == "./gpu_burn" and rows[2][4] == "7,484 MiB"
        assert rows[0][1] == "0 NVIDIA H100 80GB HBM3" and rows[0][0] == socket.gethostname()
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the dashboard")


async def test_a_process_name_is_shown_as_text_never_as_markup(tmp_path):
    history = AcceleratorHistory()
    name = "[link=http://x]evil[/link] [bold]python"
    history.add([AcceleratorSample("box", 0, "GPU-1", "H100", 50.0, 1.0, 2.0, 40.0, 100.0,
                                   processes=(AcceleratorProcess(7, name, None, "GPU-1"),))],
                time.time())
    assert process_rows(history.latest()) == [("box", "0 H100", 7, name, "—")]
    app = RlwatchApp(open_app(log_with_steps(tmp_path)).source, watch_accelerators=False)
    app.accelerators = history
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessesScreen), "the processes screen")
        assert rows_of(app)[0][3] == name


async def test_without_any_accelerator_the_screen_says_so(tmp_path):
    app = RlwatchApp(open_app(log_with_steps(tmp_path)).source, watch_accelerators=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessesScreen), "the processes screen")
        assert "No accelerator is known yet" in text_of(app.screen.query_one("#empty"))
        assert app.screen.query_one(DataTable).row_count == 0
