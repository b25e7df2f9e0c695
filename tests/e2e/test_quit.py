"""Quitting the dashboard while this machine's nvidia-smi runs: at once, silently, nothing left.

This machine has no NVIDIA driver, so no NVML: the dashboard falls back to the ``nvidia-smi``
on PATH, here a real executable in a folder of the test's own. It is a wrapper script, as
sites and containers put one in front of the real tool: it prints a real capture (the H100's,
tests/fixtures/smi) and waits on a child that holds its output pipe. Killing the script alone
left that child running with the pipe open: quitting hung (asyncio waited for the pipe) or,
when the loop closed first, ended with ``Exception ignored … BaseSubprocessTransport.__del__
… Event loop is closed``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.tmux_session import poll, tmux_session
from tests.support import step_lines

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

CAPTURE = Path(__file__).parents[1] / "fixtures" / "smi" / "h100_2026-11-22" / "query_gpu_load.csv"


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def wrapped_nvidia_smi(bin_dir: Path, pids: Path) -> None:
    """``bin_dir/nvidia-smi``: prints the capture, then waits on a child (its pid in ``pids``)."""
    bin_dir.mkdir()
    script = bin_dir / "nvidia-smi"
    script.write_text(f"#!/bin/sh\ncat '{CAPTURE}'\nsleep 600 &\necho $! >> '{pids}'\nwait\n")
    script.chmod(0o755)


def test_quitting_while_nvidia_smi_runs_is_prompt_silent_and_leaves_no_process(tmp_path):
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(3)))
    pids = tmp_path / "pids"
    wrapped_nvidia_smi(tmp_path / "bin", pids)
    with tmux_session() as tmux:
        tmux.start([str(log)], {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)},
                   width=120, height=40)
        poll(lambda: "grpo" in tmux.screen(), 30, "the dashboard")
        poll(lambda: pids.exists() and len(pids.read_text().split()) >= 2, 30,
             "the GPU query and the process query to start")
        tmux.keys("q")
        screen = poll(lambda: "rlwatch-exited=" in (shown := tmux.screen()) and shown, 15,
                      "rlwatch to exit after q")
    assert "rlwatch-exited=0" in screen
    assert "Exception ignored" not in screen and "Traceback" not in screen, screen
    left = [pid for pid in map(int, pids.read_text().split()) if running(pid)]
    assert left == [], f"nvidia-smi's children still running: {left}"
