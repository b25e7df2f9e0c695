"""``rlwatch A B C`` as a user runs it: the installed command in a real 80×24 tmux pane, the fleet
drawn, enter into a run's dashboard and escape back, the window titled by the fleet, q quits."""

from __future__ import annotations

import shutil

import pytest

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
