"""A fleet's SSH connections: one login per host shared by its runs, a dead host confined to its
runs, a dropped connection replaced once for all of them, and globs expanded on the box.

Every host is a real OpenSSH sshd on 127.0.0.1 (a port of its own, an alias in the test
client's ssh_config), and each sshd's forked children are its connections, counted on the
server's side.
"""

from __future__ import annotations

import asyncio
import os
import signal
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest

from tests.sshd import Sshd, free_port
from tests.support import step_lines, until
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import NEEDLES
from tui.session.feed import Feed
from tui.session.fleet import FleetRun
from tui.session.run_session import RunSession
from tui.sources.base import SourceError
from tui.sources.ssh.pool import RUNS_PER_CONNECTION, ConnectionPool
from tui.sources.ssh.remote_glob import expand, shell_glob
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget


@dataclass
class Boxes:
    """Two boxes up and one down, each an alias of the client's ssh_config (named after its
    port: the client home outlives the test, and its config's first match wins)."""

    up: list[Sshd]
    names: list[str]
    down: str
    down_port: int


@pytest.fixture
def boxes(client_home, tmp_path):
    started, names = [], []
    for index in (1, 2):
        box = Sshd(tmp_path / f"box{index}", [client_home.public_key]).start()
        names.append(f"box{index}-{box.port}")
        client_home.add_host(names[-1], box.port)
        client_home.trust(box.known_hosts_line())
        started.append(box)
    down_port = free_port()
    client_home.add_host(f"down-{down_port}", down_port)
    yield Boxes(started, names, f"down-{down_port}", down_port)
    for box in started:
        box.stop()


@asynccontextmanager
async def followed(sessions: list[RunSession], pool: ConnectionPool):
    """The sessions connected and followed inside the block; all of it torn down after."""
    following = []
    try:
        for session in sessions:
            await session.connect()
        following = [asyncio.create_task(session.follow()) for session in sessions]
        yield
    finally:
        for task in following:
            task.cancel()
        await asyncio.gather(*following, return_exceptions=True)
        for session in sessions:
            await session.close()
        await pool.close()


def runs(tmp_path, count: int) -> list:
    """``count`` run directories, each with a log of a few real steps."""
    made = []
    for index in range(count):
        folder = tmp_path / "runs" / f"run {index}"
        folder.mkdir(parents=True)
        (folder / "train.log").write_bytes(b"".join(step_lines(3 + index)))
        made.append(folder)
    return made


async def test_runs_on_one_host_share_one_connection(boxes, tmp_path):
    box1, box2 = boxes.up
    folders = runs(tmp_path, 3)
    pool = ConnectionPool()
    sources = [RemoteLog(RemoteTarget(host, str(folder)), NEEDLES, pool=pool)
               for host in boxes.names for folder in folders]
    try:
        await asyncio.gather(*(source.connect() for source in sources))
        models = [RunModel() for _ in sources]
        await asyncio.gather(*(Feed(source, model).run(follow=False)
                               for source, model in zip(sources, models)))
        assert [model.last_step for model in models] == [3, 4, 5, 3, 4, 5]
        assert pool.logins == 2
        # The servers' side: one forked session process per connection, one connection each.
        assert len(box1.session_pids()) == 1 and len(box2.session_pids()) == 1
    finally:
        for source in sources:
            await source.close()
        await pool.close()
    await until(lambda: not box1.session_pids() and not box2.session_pids(), 5, "the logouts")


async def test_more_runs_than_one_connection_carries_get_another(boxes, tmp_path):
    box1 = boxes.up[0]
    folder = runs(tmp_path, 1)[0]
    pool = ConnectionPool()
    sources = [RemoteLog(RemoteTarget(boxes.names[0], str(folder)), NEEDLES, pool=pool)
               for _ in range(RUNS_PER_CONNECTION + 1)]
    try:
        await asyncio.gather(*(source.connect() for source in sources))
        assert pool.logins == 2 and len(box1.session_pids()) == 2
    finally:
        for source in sources:
            await source.close()
        await pool.close()


async def test_a_down_host_fails_its_runs_at_once_and_the_others_load(boxes, tmp_path):
    folders = runs(tmp_path, 2)
    pool = ConnectionPool(retry_s=60)
    fleet = [FleetRun(f"{host}-{index}", host, lambda host=host, folder=folder: RunSession(
                 RemoteLog(RemoteTarget(host, str(folder)), NEEDLES, pool=pool),
                 watch_accelerators=False),
                 host_trouble=lambda host=host: pool.trouble(RemoteTarget(host, ".")))
             for host in (boxes.names[0], boxes.down) for index, folder in enumerate(folders)]
    try:
        opened = await asyncio.gather(*(run.open() for run in fleet))
        assert opened == [True, True, False, False]
        up, down = fleet[:2], fleet[2:]
        # One refused login answers for both runs of the host; its rows say why.
        assert pool.logins == 2
        assert all(run.reach == "unreachable" and f"{boxes.down}: cannot connect" in run.problem for run in down)
        assert all(run.problem is None for run in up)
        await asyncio.gather(*(run.session.load() for run in up))
        assert [run.session.model.last_step for run in up] == [3, 4]
        # Asked again within retry_s, the host is not tried again.
        assert await down[0].open() is False and pool.logins == 2
    finally:
        await asyncio.gather(*(run.close() for run in fleet))
        await pool.close()


async def test_a_host_that_comes_up_later_joins_without_a_restart(boxes, client_home, tmp_path):
    folder = runs(tmp_path, 1)[0]
    pool = ConnectionPool(retry_s=0.1)
    run = FleetRun("late", boxes.down, lambda: RunSession(
        RemoteLog(RemoteTarget(boxes.down, str(folder)), NEEDLES, pool=pool), watch_accelerators=False),
        retry_s=(0.2,))
    watching = asyncio.create_task(run.watch())
    box = None
    try:
        await until(lambda: run.reach == "unreachable", 10, "the first refusal")
        box = Sshd(tmp_path / "late", [client_home.public_key], port=boxes.down_port)
        client_home.trust(box.known_hosts_line())
        box.start()
        await until(lambda: run.session is not None and run.session.model.last_step == 3, 20,
                    "the run's steps once its host answers")
        assert run.reach == "open" and run.problem is None
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
        await run.close()
        await pool.close()
        if box is not None:
            box.stop()


async def test_a_dropped_connection_is_replaced_once_for_all_its_runs(boxes, tmp_path):
    box1, host = boxes.up[0], RemoteTarget(boxes.names[0], ".")
    folders = runs(tmp_path, 3)
    pool = ConnectionPool()
    sessions = [RunSession(RemoteLog(RemoteTarget(host.host, str(folder)), NEEDLES, pool=pool),
                           watch_accelerators=False) for folder in folders]
    async with followed(sessions, pool):
        await until(lambda: [s.model.last_step for s in sessions] == [3, 4, 5], 20, "the backfills")
        for pid in box1.session_pids():  # the box's side of the shared connection dies
            os.kill(pid, signal.SIGKILL)
        await until(lambda: pool.trouble(host) is not None, 10, "the drop seen")
        await until(lambda: pool.trouble(host) is None and pool.logins == 2, 30, "the new connection")
        with open(folders[0] / "train.log", "ab") as handle:
            handle.write(step_lines(4)[-1])  # the run goes on: its next step arrives
        await until(lambda: sessions[0].model.last_step == 4, 20, "the new step")
        assert pool.logins == 2 and len(box1.session_pids()) == 1


def test_a_glob_is_quoted_but_for_its_wildcards():
    assert shell_glob("/runs/my dir/grpo-*") == "'/runs/my dir/grpo-'*"
    assert shell_glob("/runs/$(touch x)/[0-9]?") == "'/runs/$(touch x)/'[0-9]?"
    assert shell_glob("/runs/a;b") == "'/runs/a;b'"


async def test_a_glob_is_expanded_on_the_box_and_runs_nothing_it_names(boxes, tmp_path):
    folders = runs(tmp_path, 2)
    trap = tmp_path / "runs" / "$(touch pwned)"
    trap.mkdir()
    pool = ConnectionPool()
    try:
        box = boxes.names[0]
        found = await expand(pool, RemoteTarget(box, f"{tmp_path}/runs/*"))
        assert sorted(target.path for target in found) == sorted(map(str, [*folders, trap]))
        assert all(target.host == box for target in found)
        assert await expand(pool, RemoteTarget(box, f"{tmp_path}/none-*")) == []
        with pytest.raises(SourceError, match="cannot connect"):
            await expand(pool, RemoteTarget(boxes.down, "/runs/*"))
    finally:
        await pool.close()
    assert not (tmp_path / "runs" / "pwned").exists() and not list(tmp_path.rglob("pwned"))


async def test_ten_runs_on_a_box_with_opensshs_default_channel_limit_all_follow(client_home, tmp_path):
    """sshd allows ten channels per connection by default; ten followed runs hold ten tails and
    the host's accelerator poller one more, so one shared connection would refuse the last."""
    box = Sshd(tmp_path / "box", [client_home.public_key], max_sessions=10).start()
    alias = f"tenbox-{box.port}"
    client_home.add_host(alias, box.port)
    client_home.trust(box.known_hosts_line())
    folders = runs(tmp_path, 10)
    pool = ConnectionPool()
    sessions = [RunSession(RemoteLog(RemoteTarget(alias, str(folder)), NEEDLES, pool=pool),
                           watch_accelerators=index == 0) for index, folder in enumerate(folders)]
    try:
        async with followed(sessions, pool):
            await until(lambda: [s.model.last_step for s in sessions] == list(range(3, 13)), 30,
                        "every run's steps")
            with open(folders[-1] / "train.log", "ab") as handle:
                handle.write(step_lines(13)[-1])
            await until(lambda: sessions[-1].model.last_step == 13, 20, "the last run followed")
            assert pool.logins == 3 and len(box.session_pids()) == 3  # four runs to a connection
    finally:
        box.stop()
