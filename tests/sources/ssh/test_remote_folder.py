"""A remote run's other files over the log's own connection: dumps, file-logger JSONL, events.

The same questions asked of the same files through a real sshd and on the
local disk give the same answers; followed files bring new steps; hostile
folder names are read as names.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys

from tensorboard.summary.writer.event_file_writer import EventFileWriter

from tests.support import (
    JSONL,
    RESUMED,
    bits,
    comparable,
    read_back,
    three_decimal_run,
    until,
    write_dumps,
    write_scalar,
)
from tui.model.merge import Source
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import NEEDLES
from tui.session.logger_feeds import TensorBoardFeed, logger_feeds
from tui.sources.run_folder import LocalFolder
from tui.sources.ssh.remote_folder import RemoteFolder
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget
from tui.ui.widgets.step_dumps import load_step_dumps


def check_json(home, target: str) -> tuple[dict, str]:
    done = subprocess.run([sys.executable, "-m", "tui", "check", target, "--json"],
                          capture_output=True, text=True, timeout=120, env=home.env(),
                          stdin=subprocess.DEVNULL)
    return json.loads(done.stdout), done.stderr


async def connected(path) -> RemoteLog:
    source = RemoteLog(RemoteTarget("gpu", str(path)), NEEDLES)
    await source.connect()
    return source


def logged_run(tmp_path):
    """A run whose console shows 3 decimals and whose JSONL and event files hold the exact values."""
    run = three_decimal_run(tmp_path, "'console', 'file', 'tensorboard'")
    (run / "proj").mkdir()
    shutil.copy(JSONL, run / "proj" / "exp.jsonl")
    shutil.copytree(RESUMED, run / "tensorboard_log" / "proj" / "exp")
    return run


def test_check_merges_a_remote_runs_jsonl_and_events_as_it_does_locally(ssh_world, tmp_path):
    home, _, _ = ssh_world
    run = logged_run(tmp_path)
    remote, remote_notes = check_json(home, f"gpu:{run}")
    local, _ = check_json(home, str(run))
    assert comparable(remote) == comparable(local)
    assert remote["latest"]["actor/pg_loss"] == local["latest"]["actor/pg_loss"] != -0.0
    assert f"merging exact values from {run}/proj/exp.jsonl" in remote_notes
    assert f"merging exact values from {run}/tensorboard_log/proj/exp" in remote_notes


async def test_a_remote_runs_dumps_are_listed_and_read_as_locally(client_home, tmp_path):
    run = tmp_path / "run $(touch pwned); 'q' \"x\""  # a hostile name is a name
    run.mkdir()
    (run / "grpo.log").write_text("step:1 - critic/score/mean:0.5\n")
    write_dumps(run, 2)
    source = RemoteLog(RemoteTarget("gpu", str(run)), NEEDLES)
    await source.connect()
    try:
        remote = RemoteFolder(source)
        local = LocalFolder(run / "grpo.log", run)
        assert [(str(d.path), d.validation, d.steps) for d in await remote.dump_dirs()] == \
               [(str(d.path), d.validation, d.steps) for d in await local.dump_dirs()] != []
        assert await load_step_dumps(remote, 2) == await load_step_dumps(local, 2)
        assert await load_step_dumps(remote, 3) == []
    finally:
        await source.close()
    assert not list(tmp_path.rglob("pwned"))


async def test_followed_remote_event_files_and_jsonl_bring_new_steps(client_home, tmp_path):
    run = three_decimal_run(tmp_path, "'console', 'file', 'tensorboard'")
    events = run / "tensorboard_log" / "proj" / "exp"
    writer = EventFileWriter(str(events))
    (run / "proj").mkdir()
    jsonl = run / "proj" / "exp.jsonl"
    jsonl.write_text("")
    source = await connected(run / "grpo.log")
    model = RunModel()
    feeds, notes = await logger_feeds(RemoteFolder(source), model)
    for feed in feeds:
        if isinstance(feed, TensorBoardFeed):
            feed.poll_seconds = 0.05
    tasks = [asyncio.create_task(feed.run(follow=True)) for feed in feeds]
    try:
        assert len(feeds) == 2, notes
        for step in (101, 102):
            write_scalar(writer, step, "critic/score/mean", step / 1000)
            await until(lambda: "critic/score/mean" in model.series
                        and model.series["critic/score/mean"].value_at(step) is not None, 10)
        assert model.series["critic/score/mean"].source_at(102) is Source.TENSORBOARD
        with open(jsonl, "a") as handle:
            handle.write(json.dumps({"step": 103, "data": {"actor/entropy": 0.25}}) + "\n")
        await until(lambda: "actor/entropy" in model.series
                    and model.series["actor/entropy"].value_at(103) == 0.25, 10)
        assert model.series["actor/entropy"].source_at(103) is Source.JSONL
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        writer.close()
        await source.close()


def exactly(back: dict[str, dict[int, float]]) -> dict[str, dict[int, bytes]]:
    """Values as their bits, so that NaN equals NaN."""
    return {key: {step: bits(value) for step, value in steps.items()} for key, steps in back.items()}


def test_export_of_a_remote_run_writes_what_a_local_export_writes(ssh_world, tmp_path):
    home, _, _ = ssh_world
    (tmp_path / "run").mkdir()
    run = logged_run(tmp_path / "run")
    for target, out in ((f"gpu:{run}", tmp_path / "remote_tb"), (str(run), tmp_path / "local_tb")):
        done = subprocess.run([sys.executable, "-m", "tui", "export", target, "--tensorboard", str(out)],
                              capture_output=True, text=True, timeout=120, env=home.env(),
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
    remote, local = read_back(tmp_path / "remote_tb"), read_back(tmp_path / "local_tb")
    assert exactly(remote) == exactly(local)
    assert remote["actor/pg_loss"][4] != -0.0  # exact, not the console's -0.000
