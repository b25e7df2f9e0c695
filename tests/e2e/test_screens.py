"""The screens as a user meets them in tmux, at 80×24 and 200×50: the installed command on a
real run that crashed after step 40, keys sent as keystrokes, the pane read back."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from tests.e2e.test_tmux import rlwatch_env
from tests.e2e.tmux_session import poll, tmux_session
from tests.support import HANGS
from tests.ui.test_snapshots import crashed_run

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def on_screen(tmux, *words: str):
    def check():
        text = tmux.screen()
        return text if all(word in text for word in words) else None
    return check


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
def test_a_crash_reads_in_two_keys_and_each_screen_names_itself(tmp_path, size):
    log = crashed_run(tmp_path)
    width, height = size
    with tmux_session() as tmux:
        # Options before the target, as argparse users type them.
        tmux.start(["--theme", "rlwatch-light", str(log)], rlwatch_env(tmp_path), width, height)
        # Polled for the verdict itself: "CRIT" alone may be drawn before the crash's block
        # is read and the header names it.
        screen = poll(on_screen(tmux, "step 40", "CRIT crashed"), 20, "the dashboard judged")
        rows = screen.splitlines()
        assert len(rows) == height and "CRIT crashed" in rows[1]  # the verdict on one row
        if width >= 200:
            # The room brings more panels, and line charts with their axes (polled: tmux may
            # show the header a moment before the panels are written out).
            poll(on_screen(tmux, "clip fraction", "┤", "└1─"), 10, "more panels, as line charts")
        else:
            assert "┤" not in screen  # sparklines
        tmux.keys("f")
        poll(on_screen(tmux, "Findings", "crash"), 10, "the findings")
        tmux.keys("Enter")
        screen = poll(on_screen(tmux, "after step 40", "▶ torch.OutOfMemoryError"), 20,
                      "the traceback at its offset")
        assert screen.splitlines()[0].lstrip().startswith("✖ CRIT crash")
        tmux.keys("o")  # the step it followed
        poll(lambda: tmux.lines()[0].lstrip().startswith("step 40 of 40"), 10, "step 40's detail")
        tmux.keys("l")  # the last step's text goes on to the crash
        poll(on_screen(tmux, "then the crash after this step"), 10, "the crash in step 40's log")
        tmux.keys("[")
        poll(lambda: tmux.lines()[0].lstrip().startswith("step 39 of 40"), 10, "step 39")
        for _ in range(3):  # one at a time: ESC and the next key in one read are alt+key
            tmux.keys("Escape")
            time.sleep(0.3)
        poll(on_screen(tmux, "train reward", "w Why"), 10, "the dashboard again")
        tmux.keys("w")
        poll(on_screen(tmux, "▶ torch.OutOfMemoryError"), 10, "w: the crash")
        tmux.keys("Escape")
        poll(on_screen(tmux, "train reward"), 10, "back on the dashboard")
        tmux.keys("q")
        poll(on_screen(tmux, "rlwatch-exited=0"), 10, "rlwatch to exit")


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
def test_a_hang_explains_itself_in_one_key(tmp_path, size):
    """A real run hung saving its step-8 checkpoint (hangs/), its log last written two hours
    ago: h opens why, the save line at its byte, the schedule and the last save's time on
    screen; enter on the line opens the log there, the line marked."""
    log = tmp_path / "train.log"
    shutil.copyfile(HANGS / "save_blocked_at_step8_still_hanging.log", log)
    written = time.time() - 2 * 3600
    os.utime(log, (written, written))
    width, height = size
    with tmux_session() as tmux:
        tmux.start([str(log)], rlwatch_env(tmp_path), width, height)
        poll(on_screen(tmux, "CRIT stalled", "h Stuck?"), 20, "the stall on the dashboard")
        tmux.keys("h")
        screen = poll(on_screen(tmux, "Why is it stuck", "train.log, byte 1,794", "trainer.save_freq=4",
                                "the last save took under 1 s"), 10, "the evidence")
        rows = screen.splitlines()
        assert len(rows) == height and all(len(row) <= width for row in rows)
        assert rows[1].lstrip().startswith("stalled: no new step for 2 h 00 min after step 7")
        tmux.keys("Down", "Enter")  # the item read from the save's line, typed in one go
        poll(on_screen(tmux, "Log  byte 1,794", "▶ local_global_step_folder:"), 10, "the log at the line")
        tmux.keys("Escape")
        poll(on_screen(tmux, "Why is it stuck"), 10, "back to the evidence")
        time.sleep(0.3)
        tmux.keys("Escape")
        poll(on_screen(tmux, "CRIT stalled"), 10, "back on the dashboard")
        tmux.keys("q")
        poll(on_screen(tmux, "rlwatch-exited=0"), 10, "rlwatch to exit")
