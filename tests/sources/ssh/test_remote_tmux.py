"""A remote run in a real tmux through the test sshd: dashboard → steps → step detail by keys alone."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
import uuid

import pytest

from tests.corpus import verl_log
from tests.e2e.tmux_session import RLWATCH, poll

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


def test_drilling_into_a_remote_step_in_tmux(ssh_world, tmp_path):
    home, _, _ = ssh_world
    log = tmp_path / "grpo.log"
    shutil.copy(verl_log("032"), log)
    expected = re.search(rb"step:34 - .*?actor/pg_loss:([-0-9.]+)", log.read_bytes()).group(1).decode()
    socket = f"rlwatch-ssh-{uuid.uuid4().hex[:12]}"

    def tmux(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=10)

    command = (f"env -u SSH_AUTH_SOCK HOME={shlex.quote(str(home.path))} "
               f"{RLWATCH} gpu:{shlex.quote(str(log))}; sleep 30")
    assert tmux("new-session", "-d", "-s", "r", "-x", "120", "-y", "40", command).returncode == 0
    try:
        def screen() -> str:
            return tmux("capture-pane", "-p", "-t", "r").stdout

        poll(lambda: "step 1120" in screen() and "train reward" in screen(), 30, "the remote dashboard")
        assert f"gpu:{log}"[-20:] in screen()
        tmux("send-keys", "-t", "r", "s")
        poll(lambda: "1119" in screen(), 10, "the steps table")
        before = screen()
        tmux("send-keys", "-t", "r", "g")
        poll(lambda: screen() != before, 5, "the go-to-step box")
        time.sleep(0.3)
        tmux("send-keys", "-t", "r", "34", "Enter")
        time.sleep(0.5)
        tmux("send-keys", "-t", "r", "Enter")
        poll(lambda: "actor/pg_loss" in screen() and expected in screen(), 15,
             "step 34's actor/pg_loss in the step detail")
        tmux("send-keys", "-t", "r", "c")  # the highlighted metric over the whole run
        poll(lambda: "Open step" in screen(), 10, "the chart")
        tmux("send-keys", "-t", "r", "Enter")  # back into a step's detail from the cursor
        poll(lambda: "Metrics" in screen() and "Dumps" in screen(), 10, "the step detail again")
        def back_home() -> bool:  # escape pops one screen: detail, chart, detail, steps
            if "train reward" in screen() and "grad norm" in screen() and "Findings" in screen():
                return True
            tmux("send-keys", "-t", "r", "Escape")
            return False

        poll(back_home, 10, "the dashboard again")
    finally:
        tmux("kill-server")
