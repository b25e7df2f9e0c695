"""The dashboard's accelerator lines, fed by a recorded real H100's nvidia-smi on PATH."""

from __future__ import annotations

from tests.sources.accelerators.conftest import H100_REAL
from tests.sources.accelerators.replay import install, path_with
from tests.support import open_app, step_lines, text_of, wait_for


async def test_the_run_hosts_gpus_appear_under_the_panels(tmp_path, monkeypatch):
    install(tmp_path / "bin", "nvidia-smi", H100_REAL)
    monkeypatch.setenv("PATH", path_with(tmp_path / "bin"))
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(5)))
    app = open_app(log)
    async with app.run_test(size=(120, 40)) as pilot:
        strip = app.dashboard.accelerators
        await wait_for(pilot, lambda: "H100" in text_of(strip), "the H100 line", timeout=15)
        line = text_of(strip)
        assert "util" in line and "100%" in line and "/79.6G" in line
        # At 120 columns the device's whole name fits (it was cut at 18 characters).
        assert "NVIDIA H100 80GB HBM3" in line


async def test_a_host_without_tools_takes_no_room_on_screen(tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", f"{empty}:/usr/bin:/bin")
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(5)))
    app = open_app(log)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session.accelerators.status, "the host's status", timeout=15)
        (status,) = app.session.accelerators.status.values()  # one status, no spam
        assert not status.ok and "no accelerator tool found" in status.text
        assert not app.dashboard.accelerators.display  # the panels keep every row
