"""A stuck run's processes read on its box over the real test sshd (the box is this machine, so
the trainer started here is the box's): through box_shell, one round trip for every pid and
the py-spy question; and a py-spy dump where the box has py-spy, never installed by us."""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.parsers.test_proc_stat import run_named
from tests.session.test_process_states import AN_HOUR, hung_trainer, stalled_after_reading
from tests.support import NEEDLES
from tui.session.run_session import RunSession
from tui.sources.accelerators.hosts import this_host
from tui.sources.process_states import read_process_states
from tui.sources.base import SourceError
from tui.sources.ssh import box_shell
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget

PY_SPY = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")


def counted(monkeypatch) -> list[str]:
    """The commands box_shell runs from now on (each still runs, for real)."""
    commands: list[str] = []
    real = box_shell.run

    async def run(connection, command, host, **options):
        commands.append(command)
        return await real(connection, command, host, **options)

    monkeypatch.setattr(box_shell, "run", run)
    return commands


async def test_a_stopped_trainer_on_the_box_is_read_in_one_round_trip(client_home, tmp_path, monkeypatch):
    log = tmp_path / "run.log"
    with hung_trainer(log, stopped=True) as trainer:
        session = RunSession(RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES))
        await session.connect()
        try:
            await session.load()
            session.judge(time.time() + AN_HOUR)
            commands = counted(monkeypatch)
            assert await session.read_processes()
            assert len(commands) == 1 and f"sh 0 {trainer.pid}" in commands[0]
            assert await session.read_stuck_processes(pause_s=0.5)  # twice, in one more round trip
            assert len(commands) == 2 and f"sh 0.5 {trainer.pid}" in commands[1]
            (finding,) = session.judge(time.time() + AN_HOUR)
        finally:
            await session.close()
    assert re.search(rf"pid {trainer.pid} \(python\) stopped \(T: SIGSTOP or \^Z\), 0 % CPU over 0\.\d+ s, up ",
                     finding.message), finding.message
    assert "by the log's process prefix, on gpu)" in finding.message
    assert session.model.processes.py_spy["gpu"] is None  # the box's PATH has no py-spy


async def test_py_spy_dumps_a_hung_trainer_where_the_box_has_it(box_with, tmp_path):
    if not Path(PY_SPY).exists():
        pytest.skip("py-spy is not installed here (the test extras install it)")
    alias = box_with(**{"py-spy": f"#!/bin/sh\nexec {PY_SPY} \"$@\"\n"})
    log = tmp_path / "run.log"
    with hung_trainer(log) as trainer:
        session = RunSession(RemoteLog(RemoteTarget(alias, str(log)), NEEDLES))
        await session.connect()
        try:
            await stalled_after_reading(session)
            title, dump = await session.py_spy_dump()
        except SourceError as error:
            if "Permission denied" in str(error) or "ptrace" in str(error).lower():
                pytest.skip(f"ptrace of a child is not permitted here: {error}")
            raise
        finally:
            await session.close()
    assert title == f"py-spy dump --pid {trainer.pid} on {alias} (the trainer, by the log's process prefix)"
    assert f"Process {trainer.pid}:" in dump and "<module> (<string>:10)" in dump


async def test_without_py_spy_on_the_box_the_dump_says_so(client_home, tmp_path):
    log = tmp_path / "run.log"
    with hung_trainer(log) as trainer:
        session = RunSession(RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES))
        await session.connect()
        try:
            await session.load()
            with pytest.raises(SourceError, match="^py-spy is not installed on gpu; rlwatch never installs anything$"):
                await session.py_spy_dump()
        finally:
            await session.close()
    assert trainer.returncode is not None


async def test_a_name_with_a_newline_and_parentheses_reads_alike_here_and_on_the_box(client_home, tmp_path):
    named = run_named("x\ny) R (z")
    (tmp_path / "run.log").write_text("")
    source = RemoteLog(RemoteTarget("gpu", str(tmp_path / "run.log")), NEEDLES)
    try:
        await source.connect()
        for _ in range(100):  # until it sleeps
            if ") S " in Path(f"/proc/{named.pid}/stat").read_text():
                break
            time.sleep(0.02)
        there = await read_process_states(source.accelerator_host(), [named.pid, 1 << 30])
        here = await read_process_states(this_host(), [named.pid, 1 << 30])
    finally:
        named.kill()
        named.wait()
        await source.close()
    for answer in (there, here):
        stat = answer.stats[named.pid]
        assert stat is not None and (stat.comm, stat.state) == ("x y) R (z", "S")
        assert answer.stats[1 << 30] is None  # no such process
    assert there.stats[named.pid] == here.stats[named.pid]
