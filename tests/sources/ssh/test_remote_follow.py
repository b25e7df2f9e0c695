"""Following a remote log: new lines arrive, drops are survived, nothing is left on the box."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

from tests.sshd import Sshd, processes_mentioning
from tests.support import following, until
from tui.sources.base import CaughtUp, Data, Status
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget

LINE = "step:{} - critic/score/mean:0.{} - actor/pg_loss:0.01 - timing_s/step:2.0 " + "x/pad:1 - " * 100 + "z:1\n"


def write(path, first: int, last: int) -> None:
    with open(path, "a") as handle:
        for step in range(first, last + 1):
            handle.write(f"reward chatter for step {step}\n" + LINE.format(step, step % 10))


async def bytes_before_caught_up(source: RemoteLog) -> int:
    """The bytes a follower from byte 0 delivers before it says it has caught up."""
    received = 0
    async for event in source.stream(0, follow=True):
        if isinstance(event, Data):
            received += len(event.data)
        elif isinstance(event, CaughtUp):
            return received
    raise AssertionError("the follower ended")


async def test_appended_lines_arrive_within_a_second_and_no_tail_is_left(client_home, tmp_path):
    log = tmp_path / "grpo.log"
    write(log, 1, 5)
    async with following(log) as model:
        await until(lambda: model.last_step == 5, 10)  # the backfill's lines
        # What is timed is a running follower's latency, not its start (a login shell and
        # tail on the box, seconds on a busy machine): it starts after the backfill.
        await until(lambda: any(" -F " in line for line in processes_mentioning(str(log))), 10)
        write(log, 6, 6)
        assert await until(lambda: model.last_step == 6) < 1.0
    await until(lambda: not processes_mentioning(str(log)), timeout=5)


async def test_a_dropped_connection_resumes_without_losing_or_repeating(client_home, ssh_world, tmp_path):
    _, gpu, _ = ssh_world
    log = tmp_path / "grpo.log"
    write(log, 1, 3)
    statuses: list[Status] = []
    async with following(log, statuses.append) as model:
        await until(lambda: model.last_step == 3)
        for pid in gpu.session_pids():  # the box's side of our connection dies
            os.kill(pid, signal.SIGKILL)
        write(log, 4, 6)  # written while we are away
        await until(lambda: any(not s.ok for s in statuses), timeout=10)
        write(log, 7, 8)
        await until(lambda: model.last_step == 8, timeout=20)
        assert list(model.series["critic/score/mean"].steps) == list(range(1, 9))  # none lost, none twice
        assert any("reconnected" in s.text for s in statuses)


async def test_a_box_down_for_a_while_is_retried_until_it_answers(client_home, tmp_path):
    box = Sshd(tmp_path / "sshd", [client_home.public_key]).start()
    client_home.add_host("rebooting", box.port)
    client_home.trust(box.known_hosts_line())
    log = tmp_path / "grpo.log"
    write(log, 1, 3)
    statuses: list[Status] = []
    try:
        async with following(log, statuses.append, host="rebooting") as model:
            await until(lambda: model.last_step == 3)
            box.stop()  # sshd and its sessions go: reconnecting is refused for a while
            await until(lambda: sum(not s.ok for s in statuses) >= 2, timeout=10)
            write(log, 4, 5)
            box.start()
            await until(lambda: model.last_step == 5, timeout=20)
            assert list(model.series["critic/score/mean"].steps) == [1, 2, 3, 4, 5]
            assert any(s.text.startswith("reconnecting to rebooting (attempt ") and
                       ": still no connection (rebooting: cannot connect" in s.text for s in statuses)
    finally:
        box.stop()


def test_killing_rlwatch_leaves_no_process_on_the_box(ssh_world, tmp_path):
    home, _, _ = ssh_world
    log = tmp_path / "grpo.log"
    write(log, 1, 2)
    code = ("import asyncio\n"
            "from tui.sources.ssh.remote_log import RemoteLog\n"
            "from tui.sources.ssh.target import RemoteTarget\n"
            "async def main():\n"
            f"    s = RemoteLog(RemoteTarget('gpu', {str(log)!r}))\n"
            "    await s.connect()\n"
            "    async for event in s.stream(0, True):\n"
            "        print(type(event).__name__, flush=True)\n"
            "asyncio.run(main())\n")
    child = subprocess.Popen([sys.executable, "-c", code], env=home.env(), stdout=subprocess.PIPE,
                             text=True, cwd=os.getcwd())
    try:
        assert child.stdout.readline().strip() == "Data"
        deadline = time.monotonic() + 5
        while not processes_mentioning(str(log)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_mentioning(str(log))
        child.kill()  # no goodbye: the TCP connection just drops
        child.wait()
        deadline = time.monotonic() + 10
        while processes_mentioning(str(log)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_mentioning(str(log)) == []
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


async def test_a_log_truncated_on_the_box_is_read_again(client_home, tmp_path):
    log = tmp_path / "grpo.log"
    write(log, 1, 6)
    resets = []
    async with following(log, resets.append) as model:
        await until(lambda: model.last_step == 6)
        log.write_text("")  # a `>` redirect restarting the run
        await asyncio.sleep(1.5)  # tail -F notices the shrink on its next check (1 s)
        write(log, 1, 2)
        await read_anew(model, resets)


async def read_anew(model, resets: list) -> None:
    """The log read again from its start: the steps written after the truncation, the reset
    told. A follower that missed the truncation never gets there (it waits past the old end);
    one that saw it needs a new session on the box, seconds on a loaded one."""
    try:
        await until(lambda: model.last_step == 2 and model.step_count == 2, timeout=30)
    except AssertionError:
        raise AssertionError(f"not read anew: at step {model.last_step} of {model.step_count}, "
                             f"told {resets}") from None
    assert any("truncated" in getattr(event, "reason", "") for event in resets)


async def test_a_truncation_told_while_the_opening_is_still_answered_is_not_lost(client_home, box_with, tmp_path):
    """tail's notice that the log was truncated shares the opening channel's stderr with the
    answers to its questions: where one of them is slow (the config head read last here, as a
    loaded box or a slow disk does), the notice comes among them, and it was taken for a
    stray line and dropped, leaving the run at its old last step (seen on a loaded machine)."""
    slow_head = box_with(head='#!/bin/sh\n[ -f /dev/stdin ] && sleep 3\nexec /usr/bin/head "$@"\n')
    log = tmp_path / "grpo.log"
    write(log, 1, 6)
    resets = []
    async with following(log, resets.append, host=slow_head) as model:
        await until(lambda: model.last_step == 6)
        log.write_text("")
        await asyncio.sleep(1.5)
        write(log, 1, 2)
        await read_anew(model, resets)


async def test_caught_up_only_once_the_bytes_there_when_following_began_have_come(client_home, box_with,
                                                                                  tmp_path):
    """A busy box can take seconds to start ``tail``: the quiet before its first bytes is not the
    end of the log, and saying so made the feed settle a run it had not read (as happened here
    on a loaded machine). The box's tail here starts a second late."""
    slow = box_with(tail='#!/bin/sh\nsleep 1\nexec /usr/bin/tail "$@"\n')
    log = tmp_path / "grpo.log"
    write(log, 1, 3)
    source = RemoteLog(RemoteTarget(slow, str(log)))  # no prefilter: it follows from byte 0
    await source.connect()

    try:
        assert await asyncio.wait_for(bytes_before_caught_up(source), 20) == log.stat().st_size
    finally:
        await source.close()


async def test_caught_up_at_once_when_the_bytes_there_when_following_began_have_come(client_home, tmp_path,
                                                                                     monkeypatch):
    """The first catch-up needs no quiet moment once every byte the log held has come: a
    fleet's rows and a crash's exception line wait on it. With the quiet moment a minute long,
    only that can say caught up here."""
    monkeypatch.setattr("tui.sources.ssh.remote_log._QUIET_S", 60.0)
    log = tmp_path / "grpo.log"
    write(log, 1, 3)
    source = RemoteLog(RemoteTarget("gpu", str(log)))
    await source.connect()

    try:
        assert await asyncio.wait_for(bytes_before_caught_up(source), 20) == log.stat().st_size
    finally:
        await source.close()
