"""``rlwatch A B C`` as a user runs it: the installed command in a real 80×24 tmux pane, the fleet
drawn, enter into a run's dashboard and escape back, the window titled by the fleet, q quits; the
processes that parse the runs' logs end with it, however it ends."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from tests.corpus import verl_log
from tests.e2e.tmux_session import poll, tmux_session
from tests.support import healthy_then_nan, step_lines

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_the_fleet_in_tmux_opens_a_run_and_comes_back(tmp_path):
    runs = tmp_path / "runs"
    (runs / "calm").mkdir(parents=True)
    (runs / "calm" / "train.log").write_bytes(b"".join(step_lines(3)))
    (runs / "nan").mkdir()
    log, nan_line = healthy_then_nan(runs / "nan")
    log.write_bytes(log.read_bytes() + nan_line)
    (tmp_path / "home").mkdir()
    with tmux_session() as tmux:
        tmux.start([str(runs / "calm"), str(runs / "nan"), str(tmp_path / "missing")],
                   {"HOME": str(tmp_path / "home")})
        def fleet_drawn() -> str | None:
            screen = tmux.screen()
            return screen if all(word in screen for word in ("unreachable", "critical", "running")) else None

        screen = poll(fleet_drawn, 30, "the fleet's rows")
        lines = screen.splitlines()
        order = [next(i for i, line in enumerate(lines) if word in line)
                 for word in ("unreachable", "critical", "running")]
        assert order == sorted(order)  # worst first
        assert "3 runs: 1 unreachable 1 critical 1 running" in tmux.display("#{pane_title}")
        tmux.keys("Down", "Enter")
        poll(lambda: "train reward" in tmux.screen(), 20, "the nan run's dashboard")
        poll(lambda: "loss-nan" in tmux.display("#{pane_title}"), 20, "the run's title")
        tmux.keys("Escape")
        poll(fleet_drawn, 20, "the fleet again")
        tmux.keys("q")
        poll(lambda: "rlwatch-exited=0" in tmux.screen(), 20, "exit status 0")


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid``."""
    found: set[int] = set()
    children = [pid]
    while children:
        parent = children.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                text = (task / "children").read_text()
            except FileNotFoundError:
                continue  # the process ended while it was read
            children += [int(child) for child in text.split()]
        found.add(parent)
    return found - {pid}


def alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (a zombie has ended: only its parent's wait is left)."""
    running = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            continue
        if state != "Z":
            running.add(pid)
    return running


@pytest.mark.parametrize("end", ["q", "SIGINT", "SIGHUP", "SIGKILL"])
def test_the_processes_that_parse_the_runs_end_with_the_fleet(tmp_path, end):
    for name in ("a", "b"):  # whole real logs: their backfills are parsed by the workers
        (tmp_path / name).mkdir()
        shutil.copy(verl_log("032"), tmp_path / name / "train.log")
    (tmp_path / "home").mkdir()
    with tmux_session() as tmux:
        tmux.start([str(tmp_path / "a"), str(tmp_path / "b")], {"HOME": str(tmp_path / "home")})
        poll(lambda: tmux.screen().count(" 1120 ") == 2 or None, 30, "both runs read")
        shell = int(tmux.display("#{pane_pid}"))
        rlwatch = min(descendants(shell))
        workers = descendants(rlwatch)
        assert workers  # forks of rlwatch, made before it had a second thread: no fork server
        assert {Path(f"/proc/{pid}/cmdline").read_bytes() for pid in workers} == \
            {Path(f"/proc/{rlwatch}/cmdline").read_bytes()}
        if end == "q":
            tmux.keys("q")
        else:
            os.kill(rlwatch, getattr(signal, end))
        poll(lambda: "rlwatch-exited=" in tmux.screen() or None, 20, "rlwatch ended")
        poll(lambda: not alive(workers) or None, 10, "its workers ended")
