"""Remote runs with no console log, through a real sshd: what local disk gives, over SSH.

A TensorBoard-only run directory, a directory holding a verl JSONL among
dumps, and a JSONL named as the target: ``check``, ``status`` and ``export``
give the same answers as for the same files on local disk; followed, new
events and JSONL lines arrive; a directory with nothing of a run is refused
in one line.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from tensorboard.summary.writer.event_file_writer import EventFileWriter

from tests.support import (
    JSONL_V06,
    RESUMED,
    accumulated,
    comparable,
    dumps,
    rlwatch_as,
    tensorboard_only,
    until,
    write_scalar,
)
from tui.cli.targets import open_target
from tui.model.merge import Source
from tui.model.run_model import RunModel
from tui.session.feed import Feed
from tui.session.logger_feeds import TensorBoardFeed, logger_feeds
from tui.sources.run_folder import folder_for


def alike(remote: dict, local: dict) -> bool:
    """The same answer, but for the wording of a stalled finding: the box's modification
    times are whole seconds, so "no new step for …" may differ by a second."""
    def without_words(result: dict) -> dict:
        result = comparable(result)
        result["findings"] = [{k: v for k, v in f.items() if f["rule"] != "stalled" or
                               k not in ("message", "value")} for f in result["findings"]]
        return result
    return without_words(remote) == without_words(local)


def check_both(home, target, *extra: str) -> tuple[dict, dict, subprocess.CompletedProcess]:
    """``check --json`` of ``gpu:target`` and of ``target``: (remote, local, remote's process)."""
    remote = rlwatch_as(home, "check", f"gpu:{target}", "--json", *extra)
    local = rlwatch_as(home, "check", str(target), "--json", *extra)
    assert remote.returncode == local.returncode, remote.stderr
    return json.loads(remote.stdout), json.loads(local.stdout), remote


def test_a_tensorboard_only_directory_checks_as_it_does_locally(ssh_world, tmp_path):
    home, _, _ = ssh_world
    run = tensorboard_only(tmp_path)
    remote, local, done = check_both(home, run)
    assert alike(remote, local) and remote["run"]["last_step"] == 6
    experiment = run / "tensorboard_log" / "proj" / "exp"
    assert remote["run"]["log"] == f"gpu:{experiment}"
    assert f"reading TensorBoard event files gpu:{experiment}" in done.stderr
    assert "newest of 2 experiment(s) found; --log names another" in done.stderr
    remote, local, _ = check_both(home, run, "--log", "tensorboard_log/proj/older")
    assert alike(remote, local) and remote["run"]["last_step"] == 2


def test_a_jsonl_named_or_found_checks_as_it_does_locally(ssh_world, tmp_path):
    home, _, _ = ssh_world
    folder = tmp_path / "run $(touch pwned); 'q'"  # a hostile name is a name
    (folder / "proj").mkdir(parents=True)
    shutil.copy(JSONL_V06, folder / "proj" / "exp.jsonl")
    dumps(folder / "rollouts")
    for target in (folder / "proj" / "exp.jsonl", folder):
        remote, local, _ = check_both(home, target)
        assert alike(remote, local)
        assert remote["run"]["log"] == f"gpu:{folder / 'proj' / 'exp.jsonl'}"
        assert remote["latest"]["actor/pg_loss"] == -0.000266974651148999
    assert not list(tmp_path.rglob("pwned"))


def test_a_stale_remote_jsonl_is_stalled_by_its_time_on_the_box(ssh_world, tmp_path):
    home, _, _ = ssh_world
    jsonl = tmp_path / "exp.jsonl"
    shutil.copy(JSONL_V06, jsonl)
    two_days_ago = time.time() - 2 * 86400
    os.utime(jsonl, (two_days_ago, two_days_ago))
    remote, local, _ = check_both(home, jsonl)
    assert alike(remote, local) and "stalled" in {f["rule"] for f in remote["findings"]}


def test_a_remote_directory_with_no_run_is_refused_in_one_line(ssh_world, tmp_path):
    home, _, _ = ssh_world
    dumps(tmp_path / "only_dumps")
    done = rlwatch_as(home, "check", f"gpu:{tmp_path / 'only_dumps'}")
    assert done.returncode == 3 and "not a training log" in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_status_and_export_of_a_remote_tensorboard_only_run(ssh_world, tmp_path):
    home, _, _ = ssh_world
    run = tensorboard_only(tmp_path)
    done = subprocess.run([sys.executable, "-m", "tui", "status", f"gpu:{run}"], capture_output=True,
                          text=True, timeout=120, env=home.env(), stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout.startswith("proj/exp 6"), done.stdout
    for target, out in ((f"gpu:{run}", tmp_path / "remote_tb"), (str(run), tmp_path / "local_tb")):
        done = rlwatch_as(home, "export", target, "--tensorboard", str(out))
        assert done.returncode == 0, done.stderr
    assert accumulated(tmp_path / "remote_tb") == accumulated(tmp_path / "local_tb") != {}


async def stop_following(tasks: list[asyncio.Task], writer: EventFileWriter, source) -> None:
    """End a follow test: its feeds stopped, its event writer closed, its connection closed."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    writer.close()
    await source.close()


async def test_followed_remote_logger_files_bring_new_steps(client_home, tmp_path):
    events = tmp_path / "tensorboard_log" / "proj" / "exp"
    writer = EventFileWriter(str(events))
    write_scalar(writer, 1, "critic/score/mean", 0.25)
    (tmp_path / "proj").mkdir()
    jsonl = tmp_path / "proj" / "exp.jsonl"
    jsonl.write_text(json.dumps({"step": 1, "data": {"actor/entropy": 0.5}}) + "\n")
    opened = open_target(f"gpu:{tmp_path}")
    note = await opened.source.connect()
    model = RunModel()
    feeds, _ = await logger_feeds(folder_for(opened.source), model)
    for feed in feeds:
        if isinstance(feed, TensorBoardFeed):
            feed.poll_seconds = 0.05
    tasks = [asyncio.create_task(feed.run(follow=True)) for feed in feeds]
    try:
        assert len(feeds) == 2, note
        assert [event async for event in opened.source.stream(0, follow=False)] == []
        await until(lambda: model.last_step == 1 and "critic/score/mean" in model.series, 10)
        write_scalar(writer, 2, "critic/score/mean", 0.5)
        with open(jsonl, "a") as handle:
            handle.write(json.dumps({"step": 3, "data": {"actor/entropy": 0.25}}) + "\n")
        await until(lambda: model.series["critic/score/mean"].value_at(2) == 0.5
                    and model.series["actor/entropy"].value_at(3) == 0.25, 10)
        assert model.series["actor/entropy"].source_at(3) is Source.JSONL
        assert model.last_write_at > time.time() - 60
    finally:
        await stop_following(tasks, writer, opened.source)


def test_an_event_file_named_as_the_target_is_its_directorys_run(ssh_world, tmp_path):
    home, _, _ = ssh_world
    shutil.copytree(RESUMED, tmp_path / "exp")
    event_file = sorted((tmp_path / "exp").iterdir())[0]
    remote, local, _ = check_both(home, event_file)
    assert alike(remote, local) and remote["run"]["log"] == f"gpu:{tmp_path / 'exp'}"


async def test_a_followed_tensorboard_only_run_survives_a_dropped_connection(client_home, ssh_world,
                                                                             tmp_path):
    """With no console to follow, the run's source keeps the connection: it says the
    connection is lost, reconnects, and the event files' new steps keep coming."""
    _, gpu, _ = ssh_world
    events = tmp_path / "tensorboard_log" / "proj" / "exp"
    writer = EventFileWriter(str(events))
    write_scalar(writer, 1, "critic/score/mean", 0.25)
    opened = open_target(f"gpu:{tmp_path}")
    await opened.source.connect()
    model, statuses = RunModel(), []
    feeds, _ = await logger_feeds(folder_for(opened.source), model)
    feeds[0].poll_seconds = 0.05
    tasks = [asyncio.create_task(feeds[0].run(follow=True)),
             asyncio.create_task(Feed(opened.source, model, on_status=statuses.append).run(True))]
    try:
        await until(lambda: model.last_step == 1, 10)
        for pid in gpu.session_pids():  # the box's side of our connection dies
            os.kill(pid, signal.SIGKILL)
        write_scalar(writer, 2, "critic/score/mean", 0.5)
        await until(lambda: any(not s.ok for s in statuses), timeout=10)
        await until(lambda: model.last_step == 2, timeout=20)
        assert any("reconnected" in s.text for s in statuses)
    finally:
        await stop_following(tasks, writer, opened.source)


def test_verls_own_tensorboard_only_run_over_ssh_as_locally(ssh_world, tmp_path):
    from tests.support import without_console

    home, _, _ = ssh_world
    for name in ("verl_08_tensorboard_only", "verl_12_running_snapshot"):
        run = without_console(name, tmp_path)
        remote, local, _ = check_both(home, run)
        assert alike(remote, local) and local["run"]["steps"] >= 7  # 0–6 of the snapshot


def test_a_remote_log_that_is_not_verls_console_does_not_hide_the_logger_files(ssh_world, tmp_path):
    from tests.support import hydra_leftovers, without_console

    home, _, _ = ssh_world
    run = without_console("verl_08_tensorboard_only", tmp_path)
    log = hydra_leftovers(run, age_s=3600)
    remote, local, done = check_both(home, run)
    assert alike(remote, local) and remote["run"]["last_step"] == 8
    assert remote["run"]["log"].endswith("verl_08_tensorboard_only")
    assert f"gpu:{log} has no verl step lines" in done.stderr


def test_a_box_whose_clock_is_hours_off_still_ages_logger_files_right(client_home, box_with,
                                                                      tmp_path):
    """The listing's times are put on this machine's clock as a log's are (``box_clock``)."""
    from tests.support import HOURS, SKEWED_DATE, stalled_of, touch

    alias = box_with(date=SKEWED_DATE)
    jsonl = tmp_path / "proj" / "exp.jsonl"
    jsonl.parent.mkdir()
    jsonl.write_text("".join(json.dumps({"step": step, "data": {
        "critic/score/mean": step / 10, "timing_s/step": 2.0}}) + "\n" for step in range(1, 6)))
    writer = EventFileWriter(str(tmp_path / "tensorboard_log" / "proj" / "exp"))
    for step in range(1, 6):
        write_scalar(writer, step, "timing_s/step", 2.0)
    writer.close()
    two_hours_ago_there = f"@{int(time.time() + 5 * HOURS - 2 * HOURS)}"
    for path in [jsonl, *tmp_path.rglob("events.out.tfevents.*")]:
        touch(path, two_hours_ago_there)
    for target in (jsonl, tmp_path):
        done = rlwatch_as(client_home, "check", f"{alias}:{target}", "--json")
        assert done.returncode == 2, done.stderr
        finding = stalled_of(done)
        assert abs(finding["value"] - 2 * HOURS) < 60 and "for 2 h 00 min" in finding["message"]
    touch(jsonl, f"@{int(time.time() + 5 * HOURS)}")  # just written, on its clock
    fresh = rlwatch_as(client_home, "check", f"{alias}:{jsonl}", "--json")
    assert fresh.returncode == 0 and json.loads(fresh.stdout)["findings"] == [], fresh.stdout
