"""Backfilling a remote log in pieces: the same model as reading the file here, byte for byte."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal

import pytest

from tests.corpus import verl_log
from tests.sshd import Sshd, processes_mentioning
from tests.support import until
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import NEEDLES
from tui.session.feed import Feed
from tui.sources.base import Lines, SourceError, Status
from tui.sources.local_file import LocalFile
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget


def snapshot(model: RunModel) -> dict:
    """Everything the backfill decides: values per key, step byte spans, incidents, samples."""
    return {
        "series": {key: [(s, repr(v)) for s, v in zip(series.steps, series.values)]
                   for key, series in model.series.items()},
        "spans": (list(model.step_index.steps), list(model.step_index.starts),
                  list(model.step_index.ends)),
        "incidents": [repr(incident) for incident in model.incidents],
        "samples": list(model.sample_offsets),
        "end": model.end_marker_seen,
    }


async def load(source) -> RunModel:
    await source.connect()
    model = RunModel()
    try:
        await Feed(source, model).run(follow=False)
    finally:
        await source.close()
    return model


@pytest.mark.parametrize("prefix", ["032", "008"])  # 008 ends in a crash: incidents matter
async def test_pieces_small_enough_to_cut_every_few_steps_change_nothing(client_home, prefix):
    log = verl_log(prefix)
    local = await load(LocalFile(log, prefilter=NEEDLES, grep_min_bytes=0))
    remote = await load(RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES, piece_bytes=4096))
    assert snapshot(remote) == snapshot(local)
    assert remote.step_count or remote.incidents  # the comparison saw something


async def test_the_box_cuts_at_line_starts_one_piece_per_cpu(client_home, tmp_path):
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(b"line %d %s\n" % (i, b"x" * (i % 97)) for i in range(20000)))
    source = RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES, piece_bytes=4096)
    await source.connect()
    plan = source._first.plan  # the plan the backfill is about to follow
    await source.close()
    assert plan.resume_at == log.stat().st_size
    assert len(plan.cuts) == min(os.cpu_count(), 8) - 1
    data = log.read_bytes()
    assert all(data[offset - 1:offset] == b"\n" for offset in plan.cuts)
    assert list(plan.cuts) == sorted(plan.cuts)


async def test_a_box_with_eight_cpus_greps_eight_pieces_at_once(client_home, tmp_path):
    box = Sshd(tmp_path / "sshd", [client_home.public_key], env={"OMP_NUM_THREADS": "8"}).start()
    try:
        client_home.add_host("eight-cpus", box.port)
        client_home.trust(box.known_hosts_line())
        log = verl_log("008")
        source = RemoteLog(RemoteTarget("eight-cpus", str(log)), NEEDLES, piece_bytes=4096)
        await source.connect()
        assert len(source._first.plan.cuts) == 7  # the plan the backfill is about to follow
        remote = RunModel()
        try:
            await Feed(source, remote).run(follow=False)
        finally:
            await source.close()
    finally:
        box.stop()
    assert snapshot(remote) == snapshot(await load(LocalFile(log, prefilter=NEEDLES, grep_min_bytes=0)))


async def test_a_last_line_without_newline_is_read_once_as_locally(client_home, tmp_path):
    log = tmp_path / "grpo.log"
    shutil.copy(verl_log("032"), log)
    with open(log, "ab") as handle:
        handle.write(b"step:9999 - critic/score/mean:0.5 - actor/pg_lo")  # no newline yet
    remote = await asyncio.wait_for(load(RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES,
                                                   piece_bytes=4096)), 60)
    local = await load(LocalFile(log, prefilter=NEEDLES, grep_min_bytes=0))
    assert snapshot(remote) == snapshot(local)
    assert remote.series["critic/score/mean"].value_at(9999) == 0.5


async def test_a_connection_lost_mid_backfill_is_a_clear_error_not_a_hang(client_home):
    source = RemoteLog(RemoteTarget("gpu", str(verl_log("032"))), NEEDLES, piece_bytes=4096)
    await source.connect()
    source.connection.close()  # the network goes before the pieces are read
    with pytest.raises(SourceError, match="^gpu: connection lost"):
        await asyncio.wait_for(Feed(source, RunModel()).run(follow=False), 20)
    await source.close()


async def test_following_a_connection_lost_before_the_pieces_reconnects_and_loads_them(client_home):
    log = verl_log("032")
    statuses: list[Status] = []
    source = RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES, piece_bytes=4096)
    await source.connect()
    source.connection.close()
    model = RunModel()
    task = asyncio.create_task(Feed(source, model, on_status=statuses.append).run(follow=True))
    try:
        local = await load(LocalFile(log, prefilter=NEEDLES, grep_min_bytes=0))
        await until(lambda: model.step_count == local.step_count, 20)
        await asyncio.sleep(0.3)  # nothing more, nothing twice, comes after
        assert snapshot(model) == snapshot(local)
        assert [s.ok for s in statuses if "reconnect" in s.text] == [False, True]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await source.close()


class CutAfterFirstLines:
    """A real RemoteLog whose box kills our SSH sessions as soon as the first matched lines
    arrive, so the drop lands in the middle of a piece's grep output."""

    def __init__(self, source: RemoteLog, sshd) -> None:
        self.source, self.sshd = source, sshd
        self.after_cut: list = []

    async def stream(self, start: int, follow: bool):
        async for event in self.source.stream(start, follow):
            if self.after_cut or not (isinstance(event, Lines) and event.lines):
                self.after_cut.append(event)
            else:
                self.after_cut.append("cut")
                for pid in self.sshd.session_pids():
                    os.kill(pid, signal.SIGKILL)
            yield event


async def test_a_drop_in_the_middle_of_a_piece_resumes_after_the_last_line_delivered(
        client_home, ssh_world, tmp_path):
    _, gpu, _ = ssh_world
    log = tmp_path / "grpo.log"
    # ~9 MB of matched lines: more than SSH's flow-control window, so most are still on the box.
    log.write_bytes(b"".join(b"step:%d - critic/score/mean:0.%d - %s- z:1\n"
                             % (step, step % 10, b"x/pad:1 - " * 100) for step in range(1, 8001)))
    cut = CutAfterFirstLines(RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES), gpu)
    await cut.source.connect()
    model = RunModel()
    task = asyncio.create_task(Feed(cut, model).run(follow=True))
    try:
        await until(lambda: model.step_count == 8000, 30)
        assert list(model.series["critic/score/mean"].steps) == list(range(1, 8001))  # none lost or twice
        reconnected = next(i for i, e in enumerate(cut.after_cut)
                           if isinstance(e, Status) and e.text.startswith("reconnected"))
        assert any(isinstance(e, Lines) and e.lines for e in cut.after_cut[reconnected:])  # the backfill resumed
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await cut.source.close()


async def test_a_backfill_cut_short_leaves_nothing_running_on_the_box(client_home, tmp_path):
    # A box whose grep takes 30 s per piece: its pieces are still reading when we go.
    tools = tmp_path / "bin"
    tools.mkdir()
    real_grep = shutil.which("grep")
    (tools / "grep").write_text('#!/bin/sh\ncase " $* " in *" -F "*) sleep 30;; esac\n'
                                f'exec {real_grep} "$@"\n')
    (tools / "grep").chmod(0o755)
    box = Sshd(tmp_path / "sshd", [client_home.public_key],
               env={"PATH": f"{tools}:/usr/bin:/bin", "OMP_NUM_THREADS": "4"}).start()
    try:
        client_home.add_host("slow-grep", box.port)
        client_home.trust(box.known_hosts_line())
        log = tmp_path / "grpo.log"
        shutil.copy(verl_log("032"), log)
        source = RemoteLog(RemoteTarget("slow-grep", str(log)), NEEDLES, piece_bytes=4096)
        await source.connect()
        assert len(source._first.plan.cuts) == 3  # four pieces under way
        assert processes_mentioning(str(log))
        await source.close()
        await until(lambda: not processes_mentioning(str(log)), 5)
    finally:
        box.stop()
