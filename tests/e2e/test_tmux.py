"""``rlwatch demo`` as a user runs it: the installed command, in a real tmux, keys sent as keystrokes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

RLWATCH = Path(sys.executable).parent / "rlwatch"


def poll(check, timeout: float, what: str):
    """Call ``check`` until it returns something truthy, for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.2)


def test_demo_in_tmux_shows_panels_and_quits_on_q():
    socket = f"rlwatch-test-{uuid.uuid4().hex[:12]}"

    def tmux(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=10)

    # The shell prints the exit status when rlwatch ends and keeps the pane open to show it.
    command = f"{RLWATCH} demo; echo rlwatch-exited=$?; sleep 30"
    started = tmux("new-session", "-d", "-s", "demo", "-x", "80", "-y", "24", command)
    assert started.returncode == 0, started.stderr
    try:
        def screen() -> str:
            return tmux("capture-pane", "-p", "-t", "demo").stdout

        def dashboard_up() -> str | None:
            text = screen()
            shown = ("train reward" in text and "entropy" in text and "s/it" in text
                     and re.search(r"\bstep \d+", text))
            return text if shown else None

        text = poll(dashboard_up, 20, "the dashboard with panels and a step number")
        assert "critic/score/mean" in text
        first_step = int(re.search(r"\bstep (\d+)", text).group(1))
        assert first_step >= 20  # the replay writes its first steps at once

        # The replay keeps going: a later step appears while we watch.
        poll(lambda: int(re.search(r"\bstep (\d+)", screen()).group(1)) > first_step, 10,
             "a newer step from the replay")

        tmux("send-keys", "-t", "demo", "q")
        ended = poll(lambda: re.search(r"rlwatch-exited=(\d+)", screen()), 10, "rlwatch to exit on q")
        assert ended.group(1) == "0"
    finally:
        tmux("kill-server")
