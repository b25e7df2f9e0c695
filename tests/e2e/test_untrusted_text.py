"""A log's escape sequences never reach the terminal (DESIGN.md, "Log text is untrusted"),
checked where it matters: the installed command in a real tmux with ``set-clipboard on``.

The log's step lines (a metric key), plain step text and a printed sample carry OSC 0 and
OSC 2 title sequences, OSC 52 (clipboard: with ``set-clipboard on`` tmux makes a paste
buffer of it) and OSC 8 links and a CSI clear screen. First a control: ``cat`` of that
log in the same kind of pane does change the pane title and does make a buffer, so the
checks below can fail. Then rlwatch's dashboard, steps table and the step's Log tab: the
title is only what rlwatch set, no buffer exists, and the screen shows the visible form.
"""

from __future__ import annotations

import re
import shlex
import shutil
import time

import pytest

from tests.e2e.tmux_session import BASE_ENV, poll, tmux_session
from tests.hostile import CLIPBOARD_SHOWN, TITLE0_SHOWN, hostile_log

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

# Run inside the pane before the command: the pane's shell reaches its own server via $TMUX.
CLIPBOARD_ON = "tmux set -s set-clipboard on; "


def buffers(tmux) -> str:
    return tmux("list-buffers").stdout


def test_control_the_raw_log_does_drive_tmux(tmp_path):
    """Without rlwatch in the way, the log sets the title and makes a buffer: the checks of
    the next test are able to fail."""
    log = hostile_log(tmp_path)
    with tmux_session() as tmux:
        command = f"{CLIPBOARD_ON}cat {shlex.quote(str(log))}; sleep 60"
        assert tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "30", command).returncode == 0
        poll(lambda: "PWNED" in tmux.display("#{pane_title}"), 10, "the log to set the pane title")
        poll(lambda: buffers(tmux), 10, "the log's OSC 52 to make a tmux buffer")


def test_dashboard_steps_and_log_tab_leave_title_and_buffers_alone(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    log = hostile_log(folder)
    home = tmp_path / "home"
    home.mkdir()
    with tmux_session() as tmux:
        tmux.start([str(log)], {"HOME": str(home)}, width=200, height=50, before=CLIPBOARD_ON)
        assert BASE_ENV["LANG"] == "C.UTF-8"  # the visible form is drawn, not ASCII stand-ins

        # rlwatch's title names the crash by its exception line, which carries OSC 0 and 52:
        # shown in the visible form. Obeyed, the pane title would be "PWNED-TITLE" or
        # "PWNED-TWO" instead.
        crash_shown = "✖ CRIT crash: RuntimeError: boom␛]0;PWNED-TITLE␇␛]52;c;"

        def title_ok() -> bool:
            # Until rlwatch's first title reaches tmux the pane keeps the host's name; an
            # obeyed OSC would have made the title PWNED-TITLE or PWNED-TWO.
            title = tmux.display("#{pane_title}")
            assert not title.startswith("PWNED"), title
            return title.startswith(f"rlwatch run/grpo 5/5 reward 0.5 {crash_shown}")

        def untouched() -> None:
            assert tmux("show", "-sv", "set-clipboard").stdout.strip() == "on"
            assert buffers(tmux) == ""
            title = tmux.display("#{pane_title}")
            assert title.startswith(f"rlwatch run/grpo 5/5 reward 0.5 {crash_shown}"), title

        poll(lambda: "step 5/5" in tmux.screen(), 20, "the dashboard at step 5")
        poll(title_ok, 10, "rlwatch's title with the crash")
        # The title goes to the terminal at once, the header with the next frame.
        poll(lambda: "crashed: RuntimeError: boom␛]0;PWNED-TITLE␇␛]52;c;cHduZWQ=␇" in tmux.screen(), 10,
             "the header with the crash")
        untouched()

        tmux.keys("s")  # the steps table
        poll(lambda: re.search(r"Steps\s+5\b", tmux.screen()), 10, "the steps table")
        untouched()

        tmux.keys("g")  # go to step 4 (the one that printed the sample)
        poll(lambda: "go to step" in tmux.screen(), 10, "the go-to box")
        tmux.keys("4", "Enter")
        poll(lambda: "go to step" not in tmux.screen(), 10, "the go-to box to close")
        tmux.keys("Enter")  # its detail
        poll(lambda: "Metrics  Log  Dumps" in tmux.screen(), 10, "step 4's detail")
        assert "step 4 of" in tmux.screen()
        untouched()

        tmux.keys("l")  # the Log tab: plain lines and the printed sample's card
        screen = poll(lambda: (lambda s: s if "printed sample 1" in s else None)(tmux.screen()),
                      10, "the Log tab with the printed sample")
        time.sleep(0.5)  # give an escaped sequence time to reach tmux: none must have
        untouched()
        assert f"plain line with a title {TITLE0_SHOWN} and ␛]2;PWNED-TWO␛\\" in screen
        assert f"clipboard {CLIPBOARD_SHOWN} link ␛]8;;https://evil.example/␛\\here" in screen
        assert "clear ␛[2J␛[H c1 \\x9b2J [bold]markup[/bold]" in screen
        assert f"what is 2+2? {TITLE0_SHOWN} {CLIPBOARD_SHOWN}" in screen
        assert "\x1b" not in screen and "\x07" not in screen
        untouched()

        tmux.keys("q")
        poll(lambda: "rlwatch-exited=0" in tmux.screen(), 10, "rlwatch to exit")
        assert buffers(tmux) == ""
        assert "PWNED" not in tmux.display("#{pane_title}")  # the shell's title is back
