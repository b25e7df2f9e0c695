"""A run's JSONL and TensorBoard events merged with its console log: once (check) and followed."""

import asyncio
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from tests.support import CONFIG, JSONL, RESUMED, exact_steps, same, three_decimal_run, until, write_scalar
from tui.model.merge import Source
from tui.model.run_model import RunModel
from tui.session.logger_feeds import (
    JsonlFeed,
    TensorBoardFeed,
    logger_feeds,
    read_logger_files,
)
from tui.sources.local_file import LocalFile
from tui.sources.logger_run import local_logger_run
from tui.sources.run_folder import LocalFolder, folder_for
from tui.sources.tensorboard_events import TensorBoardDir


def check_json(run: Path) -> tuple[dict, str]:
    done = subprocess.run([sys.executable, "-m", "tui", "check", str(run), "--json"],
                          capture_output=True, text=True, timeout=60)
    return json.loads(done.stdout), done.stderr


def test_check_reports_the_file_loggers_exact_values_over_3_decimal_text(tmp_path):
    run = three_decimal_run(tmp_path, "'console', 'file'")
    (run / "proj").mkdir()
    shutil.copy(JSONL, run / "proj" / "exp.jsonl")
    result, stderr = check_json(run)
    last = exact_steps()[-1]
    assert result["run"]["steps"] == 5 and result["run"]["last_step"] == 4
    assert set(result) == {"target", "run", "latest", "findings", "accelerators", "job"}
    for key, value in last.metrics.items():
        assert same(result["latest"][key], value), key
    assert result["latest"]["actor/pg_loss"] == -0.000266974651148999  # the console said -0.000
    assert f"merging exact values from {run}/proj/exp.jsonl" in stderr


def test_check_reports_tensorboards_float32_over_3_decimal_text(tmp_path):
    run = three_decimal_run(tmp_path, "'console', 'tensorboard'")
    writer = EventFileWriter(str(run / "tensorboard_log" / "proj" / "exp"))
    for record in exact_steps():  # verl's add_scalar(key, value, step) for every key
        for key, value in record.metrics.items():
            event = Event(step=record.step, wall_time=1.0)
            event.summary.value.add(tag=key, simple_value=value)
            writer.add_event(event)
    writer.close()
    result, stderr = check_json(run)
    for key, value in exact_steps()[-1].metrics.items():
        event, printed = float32(value), float(f"{value:.3f}")
        # The event wins unless it merely rounds what the console printed
        # (global_seqlen/mean: 3142320.875 printed, 3142321.0 in float32).
        assert same(result["latest"][key], printed if float32(printed) == event else event), key
    assert result["latest"]["actor/pg_loss"] == float32(-0.000266974651148999)
    assert result["latest"]["global_seqlen/mean"] == 3142320.875
    assert "merging exact values from" in stderr


def float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


async def test_reading_once_tags_each_value_with_its_source(tmp_path):
    run = three_decimal_run(tmp_path, "'console', 'file', 'tensorboard'")
    (run / "proj").mkdir()
    shutil.copy(JSONL, run / "proj" / "exp.jsonl")
    shutil.copytree(RESUMED, run / "tensorboard_log" / "proj" / "exp")
    model = RunModel()
    notes = await read_logger_files(model, LocalFolder(run / "grpo.log", run))
    assert len(notes) == 2
    pg_loss = model.series["actor/pg_loss"]
    assert [pg_loss.source_at(step) for step in pg_loss.steps] == [Source.JSONL] * 4 + [
        Source.TENSORBOARD] * 2  # steps 1–4 from the JSONL, 5–6 only in the events
    assert await read_logger_files(RunModel(), None) == ()  # a run with no place (the demo)


async def test_a_followed_jsonl_truncated_by_a_restart_keeps_what_was_merged(tmp_path):
    path = tmp_path / "exp.jsonl"
    path.write_text("".join(json.dumps({"step": s, "data": {"a": s * 1.5}}) + "\n" for s in (1, 2, 3)))
    model = RunModel()
    feed = JsonlFeed(LocalFile(path, poll_seconds=0.02), model)
    task = asyncio.create_task(feed.run(follow=True))
    try:
        await until(lambda: "a" in model.series and len(model.series["a"]) == 3)
        # The run restarts from its step-1 checkpoint: verl reopens the file in write mode.
        path.write_text(json.dumps({"step": 2, "data": {"a": 20.0}}) + "\n")
        await until(lambda: model.series["a"].value_at(2) == 20.0)
        assert list(model.series["a"].values) == [1.5, 20.0, 4.5]
        with open(path, "a") as handle:
            handle.write(json.dumps({"step": 3, "data": {"a": 30.0}}) + "\n")
        await until(lambda: model.series["a"].value_at(3) == 30.0)
    finally:
        task.cancel()


async def test_followed_event_files_bring_new_steps(tmp_path):
    model = RunModel()
    changes = []
    feed = TensorBoardFeed(TensorBoardDir(tmp_path), model, lambda: changes.append(1),
                           poll_seconds=0.02)
    task = asyncio.create_task(feed.run(follow=True))
    writer = EventFileWriter(str(tmp_path))
    try:
        for step in (1, 2):
            write_scalar(writer, step, "critic/score/mean", step / 4)
            await until(lambda: "critic/score/mean" in model.series
                        and model.series["critic/score/mean"].value_at(step) == step / 4)
        assert changes and model.series["critic/score/mean"].source_at(2) is Source.TENSORBOARD
        assert not math.isnan(model.series["critic/score/mean"].value_at(1))
    finally:
        task.cancel()
        writer.close()


def test_a_run_logging_only_to_the_file_logger_counts_its_steps_from_the_jsonl(tmp_path):
    (tmp_path / "grpo.log").write_text(CONFIG.format(loggers="'file'")
                                       + "Training Progress:  40%|####  | 4/10 [00:04<00:06, 1.0s/it]\n")
    (tmp_path / "proj").mkdir()
    shutil.copy(JSONL, tmp_path / "proj" / "exp.jsonl")
    result, _ = check_json(tmp_path)
    steps = [record.step for record in exact_steps()]
    assert result["run"]["steps"] == len(set(steps)) and result["run"]["last_step"] == max(steps)
    assert result["latest"]["actor/pg_loss"] == -0.000266974651148999


async def test_a_run_with_no_console_log_is_followed_and_dated_by_its_files(tmp_path):
    """A JSONL-and-events run read alone: new lines and events reach the model, and the
    files' modification times say when the run last wrote (the stalled rule's clock)."""
    (tmp_path / "proj").mkdir()
    jsonl = tmp_path / "proj" / "exp.jsonl"
    jsonl.write_text(json.dumps({"step": 1, "data": {"actor/entropy": 0.5}}) + "\n")
    events = tmp_path / "tensorboard_log" / "proj" / "exp"
    writer = EventFileWriter(str(events))
    write_scalar(writer, 1, "critic/score/mean", 0.25)
    long_ago = time.time() - 86400
    for path in (jsonl, *events.iterdir()):
        os.utime(path, (long_ago, long_ago))
    source, _ = local_logger_run(tmp_path)
    model = RunModel(source.label)
    feeds, _ = await logger_feeds(folder_for(source), model)
    assert model.last_write_at == long_ago and len(feeds) == 2
    for feed in feeds:
        if isinstance(feed, TensorBoardFeed):
            feed.poll_seconds = 0.05
    tasks = [asyncio.create_task(feed.run(follow=True)) for feed in feeds]
    try:
        await until(lambda: model.step_count == 1 and "critic/score/mean" in model.series, 10)
        assert model.last_step_at == long_ago  # a backfill is not a write
        with open(jsonl, "a") as handle:
            handle.write(json.dumps({"step": 2, "data": {"actor/entropy": 0.4}}) + "\n")
        write_scalar(writer, 3, "critic/score/mean", 0.75)
        await until(lambda: model.last_step == 3 and model.series["actor/entropy"].value_at(2), 10)
        assert model.last_step_at > time.time() - 60
        assert model.series["critic/score/mean"].source_at(3) is Source.TENSORBOARD
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        writer.close()
