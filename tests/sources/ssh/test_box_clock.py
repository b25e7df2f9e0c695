"""A remote run's age comes from the box: its log's mtime and its own clock, through real sshds.

A log untouched for two hours is ``stalled`` over SSH exactly as on local disk (``check``,
``status``, the dashboard's header), whatever the box's clock says and whether or not its
``stat`` takes ``-c``; a followed log that stops growing becomes stalled after the limit.
The boxes with odd tools are sshds whose PATH starts with wrapper scripts.
"""

from __future__ import annotations

import asyncio
import json
import re
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support import (
    DATE,
    HOURS,
    RLWATCH,
    SKEWED_DATE,
    STAT,
    dashboard_on,
    following,
    header_text,
    rlwatch_as,
    stalled_of,
    touch,
    until,
    wait_for,
)
from tui.parsers.log_scanner import NEEDLES
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import apply_overrides, load_rules
from tui.sources.base import Status
from tui.sources.ssh.box_clock import BoxClock
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget

# BusyBox built without FEATURE_STAT_FORMAT, or a BSD: no -c (nor --format).
STAT_WITHOUT_C = ('#!/bin/sh\nfor a; do case $a in -c*|--format*|--printf*) '
                  'echo "stat: invalid option -- \'c\'" >&2; exit 1;; esac; done\n'
                  f'exec {STAT} "$@"\n')
# And one that cannot give an mtime at all: stat without -c or -f, date without -r.
STAT_WITHOUT_C_OR_F = STAT_WITHOUT_C.replace("-c*|", "-c*|-f*|")
DATE_WITHOUT_R = (f'#!/bin/sh\nfor a; do case $a in -r*) echo "date: invalid option -- \'r\'" >&2; '
                  f'exit 1;; esac; done\nexec {DATE} "$@"\n')
LINE = ("step:{0} - critic/score/mean:0.{1} - actor/pg_loss:0.01 - timing_s/step:2.0 - "
        + "x/pad:1 - " * 50 + "z:1\n")
QUICK_RULES = '[[rule]]\nid = "stalled"\nfactor = 1.0\nmin_seconds = 3.0\n'


def write(path: Path, first: int, last: int) -> None:
    """Steps ``first``..``last`` of an unfinished run (2 s steps, no total), with chatter."""
    with open(path, "a") as handle:
        for step in range(first, last + 1):
            handle.write(f"reward chatter for step {step}\n" + LINE.format(step, step % 10))


def aged_log(tmp_path: Path, when: str = "2 hours ago") -> Path:
    """An unfinished run (2 s steps, no total) whose log was last written ``when``."""
    log = tmp_path / "grpo.log"
    write(log, 1, 5)
    touch(log, when)
    return log


def assert_two_hours_stalled(remote: subprocess.CompletedProcess, local: subprocess.CompletedProcess):
    assert remote.returncode == local.returncode == 2, remote.stderr
    mine, theirs = stalled_of(remote), stalled_of(local)
    assert mine["severity"] == theirs["severity"] == "critical"
    assert mine["last_step"] == theirs["last_step"] == 5
    assert abs(mine["value"] - 2 * HOURS) < 60 and abs(mine["value"] - theirs["value"]) < 5
    assert mine["message"].startswith("no new step for 2 h 00 min after step 5 (typical step 2 s)")
    # The same words, but for the host each looked for the log's writers on (none: the run is over).
    assert on_a_host(mine["message"]) == on_a_host(theirs["message"])
    assert "processes: nothing on " in mine["message"]


def on_a_host(message: str) -> str:
    """``message`` with the host named in its processes' words made ``HOST``."""
    return re.sub(r"processes: nothing on \S+ ", "processes: nothing on HOST ", message)


# -- check --------------------------------------------------------------------


def test_a_log_untouched_for_two_hours_is_stalled_as_on_local_disk(ssh_world, tmp_path):
    home, _, _ = ssh_world
    log = aged_log(tmp_path)
    assert_two_hours_stalled(rlwatch_as(home, "check", f"gpu:{log}", "--json"),
                             rlwatch_as(home, "check", str(log), "--json"))


def test_the_same_for_a_run_directory_and_a_line_still_being_written(ssh_world, tmp_path):
    # The directory's log is chosen first (one round trip) and backfilled in a second; the
    # half-written last line comes as bytes after the backfill and must not look new either.
    home, _, _ = ssh_world
    log = aged_log(tmp_path)
    with open(log, "a") as handle:
        handle.write("reward chatter for st")
    touch(log, "2 hours ago")
    assert_two_hours_stalled(rlwatch_as(home, "check", f"gpu:{tmp_path}", "--json"),
                             rlwatch_as(home, "check", str(tmp_path), "--json"))


def test_a_box_whose_clock_is_hours_off_still_gives_the_right_age(client_home, box_with, tmp_path):
    alias = box_with(date=SKEWED_DATE)
    log = aged_log(tmp_path, f"@{int(time.time() + 5 * HOURS - 2 * HOURS)}")  # 2 h ago on its clock
    done = rlwatch_as(client_home, "check", f"{alias}:{log}", "--json")
    assert done.returncode == 2, done.stderr
    finding = stalled_of(done)
    assert abs(finding["value"] - 2 * HOURS) < 60 and "for 2 h 00 min" in finding["message"]
    # A log it wrote just now is fresh, not three hours in the future nor five in the past.
    touch(log, f"@{int(time.time() + 5 * HOURS)}")
    fresh = rlwatch_as(client_home, "check", f"{alias}:{log}", "--json")
    assert fresh.returncode == 0 and json.loads(fresh.stdout)["findings"] == [], fresh.stdout


def test_a_box_whose_stat_lacks_c_still_gives_the_right_age(client_home, box_with, tmp_path):
    alias = box_with(stat=STAT_WITHOUT_C)
    log = aged_log(tmp_path)
    assert_two_hours_stalled(rlwatch_as(client_home, "check", f"{alias}:{log}", "--json"),
                             rlwatch_as(client_home, "check", str(log), "--json"))
    directory = rlwatch_as(client_home, "check", f"{alias}:{tmp_path}", "--json")  # discovery too
    assert json.loads(directory.stdout)["run"]["log"] == f"{alias}:{log}", directory.stderr
    assert_two_hours_stalled(directory, rlwatch_as(client_home, "check", str(log), "--json"))


BUSYBOX = shutil.which("busybox")
# The clock's tools from BusyBox. (Not its grep: it has no -b, so a box whose grep is BusyBox's
# cannot be backfilled by byte offset at all; that is another matter than its clock.)
BUSYBOX_TOOLS = ("stat", "date", "wc", "tr")


@pytest.mark.skipif(BUSYBOX is None, reason="busybox is not installed (.ci/run installs it)")
def test_a_busybox_box_gives_the_same_age(client_home, box_with, tmp_path):
    alias = box_with(**{tool: f'#!/bin/sh\nexec {BUSYBOX} {tool} "$@"\n' for tool in BUSYBOX_TOOLS})
    log = aged_log(tmp_path)
    assert_two_hours_stalled(rlwatch_as(client_home, "check", f"{alias}:{log}", "--json"),
                             rlwatch_as(client_home, "check", str(log), "--json"))


@pytest.mark.parametrize("target", ["log", "directory"])
def test_a_box_that_cannot_give_an_mtime_reads_the_run_and_says_why_it_cannot_age_it(
        client_home, box_with, tmp_path, target):
    alias = box_with(stat=STAT_WITHOUT_C_OR_F, date=DATE_WITHOUT_R)
    log = aged_log(tmp_path)
    done = rlwatch_as(client_home, "check", f"{alias}:{log if target == 'log' else tmp_path}", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["run"]["last_step"] == 5, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{alias} gives no modification time for {log}" in done.stderr
    assert "counts from when rlwatch read it" in done.stderr


# -- status ---------------------------------------------------------------------


def test_status_of_a_remote_log_untouched_for_two_hours_is_critical(ssh_world, tmp_path):
    home, _, _ = ssh_world
    log = aged_log(tmp_path)
    env = {key: value for key, value in home.env().items() if not key.startswith("XDG_")}
    lines = []
    for target in (f"gpu:{log}", str(log), f"gpu:{log}"):  # the second remote call reads from its state
        done = subprocess.run([RLWATCH, "status", target],
                              capture_output=True, text=True, timeout=60, env=env,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 2, done.stdout + done.stderr
        lines.append(done.stdout)
    assert lines[0] == lines[1] == lines[2] and "CRIT stalled" in lines[0]


# -- following ------------------------------------------------------------------


async def test_a_followed_log_that_stops_growing_becomes_stalled_after_the_limit(client_home, tmp_path):
    log = tmp_path / "grpo.log"
    write(log, 1, 3)
    engine = RuleEngine(apply_overrides(load_rules(), QUICK_RULES, "rules.toml"))
    stalled = lambda model: [f for f in engine.evaluate(model, time.time())  # noqa: E731
                             if f.rule == "stalled"]
    async with following(log) as model:
        await until(lambda: model.last_step == 3, 10)
        for step in (4, 5):  # growing: never stalled
            await asyncio.sleep(1.0)
            written = time.monotonic()
            write(log, step, step)
            await until(lambda: model.last_step == step, 5)
            assert stalled(model) == []
        await until(lambda: bool(stalled(model)), 15)  # then it stops
        assert 3.0 <= time.monotonic() - written < 5.0
        (finding,) = stalled(model)
        assert finding.severity == "critical" and finding.message.startswith("no new step for 3 s after step 5")


async def test_a_followed_log_untouched_for_two_hours_shows_its_age(client_home, tmp_path):
    # The dashboard follows: its backfill and the half-written line the follower re-sends.
    log = aged_log(tmp_path)
    with open(log, "a") as handle:
        handle.write("step:6 - critic/score/mean:0.")
    touch(log, "2 hours ago")
    async with following(log) as model:
        await until(lambda: model.last_step == 5, 10)
        await asyncio.sleep(0.5)  # the follower's first bytes
        assert abs(time.time() - model.last_step_at - 2 * HOURS) < 60


async def test_steps_written_while_the_connection_was_down_keep_their_age(client_home, ssh_world, tmp_path):
    # They arrive at the reconnect; the follower's own stamp says they were written long before.
    _, gpu, _ = ssh_world
    log = aged_log(tmp_path, "3 hours ago")
    statuses: list[Status] = []
    async with following(log, statuses.append) as model:
        await until(lambda: model.last_step == 5)
        for pid in gpu.session_pids():
            os.kill(pid, signal.SIGKILL)
        write(log, 6, 6)
        touch(log, "2 hours ago")  # as if the connection had been down for the last three hours
        await until(lambda: model.last_step == 6, timeout=20)
        assert any("reconnected" in s.text for s in statuses)
        assert abs(time.time() - model.last_step_at - 2 * HOURS) < 60


async def test_the_dashboard_header_says_two_hours_and_stalled(client_home, tmp_path):
    log = aged_log(tmp_path)
    source = RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES)
    await source.connect()
    app = dashboard_on(source, watch_accelerators=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: "stalled" in header_text(app), "the stalled verdict", timeout=20)
        assert "last step 2h00m ago" in " ".join(header_text(app).split())
    await source.close()


# -- the CLOCK line -------------------------------------------------------------


def test_the_clock_line_is_translated_to_this_machines_clock():
    box_ahead = BoxClock.parse(b"CLOCK 100 1000 5000\n", received_at=2000.0)  # box 3000 s ahead
    assert box_ahead == BoxClock(100, -2000.0, True)
    assert box_ahead.mtime_for(100) == -2000.0 and box_ahead.mtime_for(101) is None
    # Never later than it was read: a file dated in the future is written "now".
    assert BoxClock.parse(b"CLOCK 1 9000 5000", received_at=5000.0).mtime == 5000.0


@pytest.mark.parametrize("line", [b"", b"RESUME 4", b"CLOCK 1 2", b"CLOCK 1 2 3 4", b"step:1 - a:1"])
def test_a_line_that_is_not_a_clock_line_is_none(line):
    assert BoxClock.parse(line, 0.0) is None


def test_what_the_box_could_not_say_is_said_once():
    no_mtime = BoxClock.parse(b"CLOCK 10 - 5000", 5000.0)
    no_date = BoxClock.parse(b"CLOCK 10 4000 -", 5000.0)
    assert no_mtime.mtime_for(5) is None and no_date.mtime_for(5) is None
    assert "gpu gives no modification time for /r/x.log" in no_mtime.note("gpu", "/r/x.log")
    assert "`date +%s` on gpu gives no time" in no_date.note("gpu", "/r/x.log")
    assert BoxClock.parse(b"CLOCK 10 4000 5000", 5000.0).note("gpu", "/r/x.log") is None
