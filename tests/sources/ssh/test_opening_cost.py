"""What opening a remote run costs the box, counted by a real sshd: every channel is an sshd
session and a login shell there (whose start-up files, conda or pyenv, can outweigh the whole
backfill of a small log), so a run is found, backfilled, asked about and followed in one."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.corpus import verl_log
from tests.sources.accelerators.conftest import H100_REAL
from tests.sources.accelerators.replay import install
from tests.sshd import Sshd, processes_mentioning
from tests.support import following, rlwatch_as, until
from tui.parsers.log_scanner import NEEDLES
from tui.parsers.run_config import CONFIG_HEAD_BYTES
from tui.session.run_session import RunSession
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget

# A real run stuck saving step 8's checkpoint (trainer.save_freq=4), its log never ended.
SAVE_HANG = (Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "generated" / "hangs"
             / "save_blocked_at_step8_still_hanging.log")


@pytest.fixture
def counted(client_home, tmp_path) -> Iterator[Callable[..., tuple[str, Sshd]]]:
    """``counted(nvidia_smi=False)``: an sshd that logs every session it starts (with a
    replayed H100 nvidia-smi on its PATH if asked); its alias in the client home, and it."""
    started: list[Sshd] = []

    def start(nvidia_smi: bool = False) -> tuple[str, Sshd]:
        folder = tmp_path / f"counted{len(started)}"
        env = {}
        if nvidia_smi:
            install(folder / "bin", "nvidia-smi", H100_REAL)
            env = {"PATH": f"{folder / 'bin'}:/usr/bin:/bin"}
        box = Sshd(folder / "sshd", [client_home.public_key], env=env, log_sessions=True).start()
        started.append(box)
        alias = f"counted{box.port}"
        client_home.add_host(alias, box.port)
        client_home.trust(box.known_hosts_line())
        return alias, box

    yield start
    for box in started:
        box.stop()


def run_of(tmp_path: Path, prefix: str = "032") -> Path:
    """A run directory holding a copy of a corpus log (and notes that are no log)."""
    run = tmp_path / "runs" / "r0"
    run.mkdir(parents=True)
    shutil.copy(verl_log(prefix), run / "train.log")
    (run / "notes.txt").write_text("nothing to see\n")
    return run


async def sessions(box: Sshd, count: int) -> list[str]:
    """The box's sessions once it has logged ``count`` (it logs as it starts them), or
    whatever it logged within the wait."""
    await until(lambda: len(box.sessions_started()) >= count, timeout=5, what=f"{count} session(s)")
    return box.sessions_started()


@pytest.mark.parametrize("named", ["log", "run directory"])
async def test_a_remote_check_costs_the_box_one_session_and_leaves_nothing(client_home, counted,
                                                                        tmp_path, named):
    alias, box = counted()
    run = run_of(tmp_path)
    target = run / "train.log" if named == "log" else run
    done = await asyncio.to_thread(rlwatch_as, client_home, "check", f"{alias}:{target}", "--json")
    local = await asyncio.to_thread(rlwatch_as, client_home, "check", str(run / "train.log"), "--json")
    result = json.loads(done.stdout)
    assert result["run"]["steps"] == json.loads(local.stdout)["run"]["steps"] == 1120, done.stderr
    assert result["run"]["log"] == f"{alias}:{run / 'train.log'}"
    # Found, backfilled, its logger hints and the box's accelerator tools asked: one channel.
    assert len(await sessions(box, 1)) == 1
    # The channel's script ends in a follower that a check never reads: it ends with it.
    await until(lambda: not processes_mentioning(str(run)), timeout=5, what="the box's processes ending")


def stalled_run(tmp_path: Path) -> Path:
    """SAVE_HANG last written an hour ago: a run that has not finished, and stalled. Its
    config's project and experiment names are left out: they send a session looking for the
    run's logger files (a listing of their own), which is not what is counted here."""
    log = tmp_path / "run.log"
    log.write_bytes(b"".join(line for line in SAVE_HANG.read_bytes().splitlines(keepends=True)
                             if b"'project_name'" not in line and b"'experiment_name'" not in line))
    hour_ago = time.time() - 3600
    os.utime(log, (hour_ago, hour_ago))
    return log


async def test_a_remote_check_of_a_stalled_run_reads_its_config_in_the_opening_and_its_processes_in_one_more(
        client_home, counted, tmp_path):
    """A run that may stall has its printed config read (the stall then says what the step
    was due to do): its head comes with the opening, not in a login of its own. Stalled, its
    trainer's /proc is read twice a second apart (its CPU share): one more session, not two."""
    alias, box = counted()
    done = await asyncio.to_thread(rlwatch_as, client_home, "check", f"{alias}:{stalled_run(tmp_path)}")
    assert "saving a checkpoint" in done.stdout, done.stderr
    assert "step 8 saves a checkpoint (trainer.save_freq=4)" in done.stdout
    assert "; processes: pid 5642" in done.stdout  # the log's (TaskRunner pid=5642), read on the box
    assert len(await sessions(box, 2)) == 2


async def test_a_followed_run_not_finished_gets_its_config_in_the_opening_channel(client_home, counted,
                                                                                tmp_path):
    alias, box = counted()
    session = RunSession(RemoteLog(RemoteTarget(alias, str(stalled_run(tmp_path))), NEEDLES),
                         watch_accelerators=False)
    await session.connect()
    task = asyncio.create_task(session.follow())
    try:
        await until(lambda: session.model.config is not None, timeout=20, what="the config")
        assert session.model.config.values["trainer.save_freq"] == "4"
        assert len(await sessions(box, 1)) == 1
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await session.close()


async def test_the_opening_head_answers_its_range_once(client_home, counted, tmp_path):
    """The head the opening brought stands for that range then: the same range read again
    (the log may have grown), or any other, is read on the box."""
    alias, box = counted()
    log = stalled_run(tmp_path)
    source = RemoteLog(RemoteTarget(alias, str(log)), NEEDLES)
    await source.connect()
    try:
        assert await source.read_range(0, CONFIG_HEAD_BYTES) == log.read_bytes()[:CONFIG_HEAD_BYTES]
        assert len(await sessions(box, 1)) == 1
        assert await source.read_range(0, 100) == log.read_bytes()[:100]
        assert len(await sessions(box, 2)) == 2
        with open(log, "ab") as grown:
            grown.write(b"step:9 - actor/pg_loss:0.5\n")
        assert await source.read_range(0, CONFIG_HEAD_BYTES) == log.read_bytes()[:CONFIG_HEAD_BYTES]
        assert len(await sessions(box, 3)) == 3
    finally:
        await source.close()


async def test_a_head_with_nul_bytes_is_read_whole(client_home, counted, tmp_path):
    """A shell drops NUL bytes from what it answers: a head holding one (a hole a crash
    left) is read again by range rather than taken shorter, its offsets shifted."""
    alias, box = counted()
    log = tmp_path / "run.log"
    log.write_bytes(b"\0" * 10 + b"\n" + SAVE_HANG.read_bytes())
    source = RemoteLog(RemoteTarget(alias, str(log)), NEEDLES)
    await source.connect()
    try:
        assert await source.read_range(0, CONFIG_HEAD_BYTES) == log.read_bytes()[:CONFIG_HEAD_BYTES]
        assert len(await sessions(box, 2)) == 2
    finally:
        await source.close()


async def test_a_box_with_a_gpu_is_read_with_only_the_tools_own_channels(client_home, counted,
                                                                      tmp_path):
    alias, box = counted(nvidia_smi=True)
    run = run_of(tmp_path)
    done = await asyncio.to_thread(rlwatch_as, client_home, "check", f"{alias}:{run}", "--json")
    assert json.loads(done.stdout)["accelerators"], done.stderr
    # The opening channel asked which tools the box has; nvidia-smi's GPU query and its
    # compute-apps query are the only others.
    assert len(await sessions(box, 3)) == 3


async def test_a_followed_run_is_found_backfilled_and_followed_in_one_channel(client_home, counted,
                                                                           tmp_path):
    alias, box = counted()
    run = run_of(tmp_path)
    notes: list[str] = []
    async with following(run, host=alias, notes=notes) as model:
        assert len(notes) == 1 and "train.log" in notes[0]
        await until(lambda: model.step_count == 1120, timeout=20, what="the backfill")
        with open(run / "train.log", "a") as log:
            log.write("step:1121 - critic/score/mean:0.5 - actor/pg_loss:0.1\n")
        await until(lambda: model.last_step == 1121, timeout=10, what="the appended step")
        assert len(await sessions(box, 1)) == 1
    await until(lambda: not processes_mentioning(str(run)), timeout=5, what="the follower ending")


async def test_the_opening_channels_answers_are_used_once(client_home, counted, tmp_path):
    """An answer the opening brought stands for the question asked then; asked again later
    (a poller looking for tools anew), the box is asked again."""
    alias, box = counted()
    run = run_of(tmp_path)
    source = RemoteLog(RemoteTarget(alias, str(run / "train.log")), NEEDLES)
    await source.connect()
    try:
        from tui.sources.accelerators.detect import pollers_for, present

        runner = source.accelerator_host().runner
        assert await present(runner, pollers_for(runner, False)) == []
        assert len(await sessions(box, 1)) == 1
        assert await present(runner, pollers_for(runner, False)) == []
        assert len(await sessions(box, 2)) == 2
    finally:
        await source.close()


async def test_a_line_still_being_written_is_followed_once_and_whole_in_the_same_channel(
        client_home, counted, tmp_path):
    alias, box = counted()
    run = run_of(tmp_path)
    with open(run / "train.log", "a") as log:
        log.write("step:1121 - critic/score/mean:0.25")  # the trainer is still printing it
    async with following(run, host=alias) as model:
        await until(lambda: model.step_count == 1120, timeout=20, what="the backfill")
        with open(run / "train.log", "a") as log:
            log.write(" - actor/pg_loss:0.125\n")
        await until(lambda: model.last_step == 1121, timeout=10, what="the finished line")
        assert model.step_count == 1121
        assert model.latest()["actor/pg_loss"] == 0.125
        assert model.latest()["critic/score/mean"] == 0.25
        assert len(await sessions(box, 1)) == 1


async def test_the_gpus_and_their_processes_are_asked_at_once(client_home, counted, tmp_path):
    """Each nvidia-smi costs a login shell and NVML's start (a second or more on a big box):
    a check's two queries run side by side, not one after the other."""
    alias, box = counted(nvidia_smi=True)
    bin_dir = box.directory.parent / "bin"
    (bin_dir / "nvidia-smi").rename(bin_dir / "recorded-nvidia-smi")
    times = tmp_path / "nvidia-smi-times"
    wrapper = bin_dir / "nvidia-smi"
    wrapper.write_text(f'#!/bin/sh\necho "start $(date +%s.%N)" >> {times}\nsleep 0.5\n'
                       f'echo "end $(date +%s.%N)" >> {times}\nexec {bin_dir / "recorded-nvidia-smi"} "$@"\n')
    wrapper.chmod(0o755)
    done = await asyncio.to_thread(rlwatch_as, client_home, "check", f"{alias}:{run_of(tmp_path)}",
                                   "--json")
    assert json.loads(done.stdout)["accelerators"], done.stderr
    marks = [line.split() for line in times.read_text().splitlines()]
    assert [kind for kind, _ in marks] == ["start", "start", "end", "end"]
