"""``rlwatch PATH`` on a target it cannot read: one line on stderr, exit 3, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RLWATCH = Path(sys.executable).parent / "rlwatch"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(RLWATCH), *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_missing_target_is_one_line_and_exit_3(tmp_path):
    done = run(str(tmp_path / "no-such.log"))
    assert done.returncode == 3
    assert done.stderr.startswith("rlwatch: ") and done.stderr.count("\n") == 1
    assert "no such file" in done.stderr


def test_unreadable_log_fails_before_the_dashboard(tmp_path):
    log = tmp_path / "run"
    log.mkdir()
    done = run(str(tmp_path), "--log", "run")  # --log names a directory, not a log
    assert done.returncode == 3
    assert done.stderr.startswith("rlwatch: ") and "Traceback" not in done.stderr
    assert done.stdout == ""  # the screen was never switched to the app


def test_demo_rejects_a_speed_of_zero():
    done = run("demo", "--speed", "0")
    assert done.returncode == 3  # a bad argument is UNKNOWN, as for a monitoring plugin
    assert done.stderr.startswith("rlwatch: ")
