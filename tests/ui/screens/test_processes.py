"""The processes screen (``p``): who holds each device, from recorded real nvidia-smi and npu-smi
output replayed by programs on PATH, read by the app's own pollers."""

from __future__ import annotations

import socket
import time

from tests.sources.accelerators.conftest import (
    H100_MIG,
    NO_DRIVER,
    NPU_310P,
    NPU_910B4_BUSY,
)
from tests.support import app_on, dashboard_on, open_processes, text_of, wait_for
from tui.model.accelerators import AcceleratorHistory
from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample
from tui.ui.app import RlwatchApp
from tui.ui.screens.dashboard import DashboardScreen
from tui.ui.screens.help import HelpScreen
from tui.ui.screens.processes import (
    IDLE,
    NO_ACCELERATOR,
    ProcessesScreen,
    ProcessRow,
    process_rows,
)


def note_of(app: RlwatchApp) -> list[str]:
    """The lines under the table, as drawn."""
    return [line.strip() for line in text_of(app.screen.query_one("#note")).splitlines()]


async def test_p_lists_the_processes_on_a_recorded_h100(tmp_path, monkeypatch):
    app = app_on(tmp_path, monkeypatch, "nvidia-smi", H100_MIG)  # a real H100's gpu_burn and memhogs
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: any(s.processes for s in app.session.accelerators.latest()),
                       "the compute-apps reading", timeout=20)
        rows = await open_processes(pilot, app, 3)
        host, device = socket.gethostname(), "0 NVIDIA H100 80GB HBM3"
        assert rows == [[host, device, "21180", "/root/tools/memhog", "2,296 MiB"],
                        [host, device, "21181", "/root/tools/memhog", "1,272 MiB"],
                        [host, device, "21198", "./gpu_burn", "7,484 MiB"]]
        assert not app.screen.query_one("#note").display
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the dashboard")


async def test_npu_smi_process_sections_fill_the_rows(tmp_path, monkeypatch):
    app = app_on(tmp_path, monkeypatch, "npu-smi", NPU_910B4_BUSY)
    async with app.run_test(size=(120, 40)) as pilot:
        rows = await open_processes(pilot, app, 2)
        host = socket.gethostname()
        assert rows == [[host, "0 910B4-1", "19334", "VLLMWorker_TP", "58,472 MiB"],
                        [host, "1 910B4-1", "19341", "VLLMWorker_TP", "58,472 MiB"]]


async def test_an_idle_device_has_a_row_saying_so(tmp_path, monkeypatch):
    # A 310P box with sparse NPU ids; its table says "No running processes found in NPU n".
    app = app_on(tmp_path, monkeypatch, "npu-smi", NPU_310P)
    async with app.run_test(size=(120, 40)) as pilot:
        rows = await open_processes(pilot, app, 6)
        assert {(row[2], row[3], row[4]) for row in rows} == {("", IDLE, "")}
        assert [row[1].split()[0] for row in rows] == [str(s.index) for s in app.session.accelerators.latest()]
        assert all(row[1].endswith("310P3") for row in rows)


async def test_a_failing_tool_is_named_under_the_table(tmp_path, monkeypatch):
    app = app_on(tmp_path, monkeypatch, "nvidia-smi", NO_DRIVER)  # the real "couldn't communicate"
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session.accelerators.status, "the tool's status", timeout=20)
        await open_processes(pilot, app, 0)
        await wait_for(pilot, lambda: len(note_of(app)) == 2, "the failure under the table")
        note = note_of(app)
        assert note[0] == NO_ACCELERATOR
        assert note[1] == (f"{socket.gethostname()}: nvidia-smi: cannot talk to the NVIDIA driver "
                           "(not loaded, or replaced without a reboot)")


async def test_without_any_accelerator_the_screen_says_so(tmp_path, monkeypatch):
    app = app_on(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_processes(pilot, app, 0)
        assert note_of(app) == [NO_ACCELERATOR, f"{socket.gethostname()}: no accelerator tool found "
                                                "(looked for nvidia-smi, npu-smi, rocm-smi, amd-smi)"]


async def test_a_process_name_is_shown_as_text_never_as_markup(tmp_path, monkeypatch):
    history = AcceleratorHistory()
    name = "[link=http://x]evil[/link] [bold]python"
    history.add([AcceleratorSample("[b]box", 0, "GPU-1", "H100", 50.0, 1.0, 2.0, 40.0, 100.0,
                                   processes=(AcceleratorProcess(7, name, None, "GPU-1"),))],
                time.time())
    assert process_rows(history.latest()) == [ProcessRow("[b]box", "0 H100", 7, name, "—")]
    app = dashboard_on(app_on(tmp_path, monkeypatch).source, watch_accelerators=False)
    app.session.accelerators = history
    async with app.run_test(size=(120, 40)) as pilot:
        assert await open_processes(pilot, app, 1) == [["[b]box", "0 H100", "7", name, "—"]]


async def test_help_lists_the_screens_keys_and_how_to_read_it(tmp_path, monkeypatch):
    app = app_on(tmp_path, monkeypatch)
    async with app.run_test(size=(100, 36)) as pilot:
        await open_processes(pilot, app, 0)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        keys = text_of(app.screen.query_one("#keys"))
        assert "back to the previous screen" in keys and "quit rlwatch" in keys
        assert IDLE in text_of(app.screen.query_one("#guide"))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessesScreen), "the processes again")


async def test_the_command_palette_finds_it_by_name(tmp_path, monkeypatch):
    app = app_on(tmp_path, monkeypatch)
    async with app.run_test(size=(100, 36)) as pilot:
        await pilot.press("ctrl+p", *"processes")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessesScreen), "the processes screen")
