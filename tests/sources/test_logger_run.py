"""Runs with no console log: which TensorBoard directory or file-logger JSONL is the run.

Event files are written by real writers (tensorboardX's ``SummaryWriter``, the
tensorboard package's ``EventFileWriter``, and the fixture verl's logger would
have left); JSONLs are the fixtures written with verl's own ``FileLogger`` code.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.support import JSONL_V06, JSONL_V071, RESUMED, dumps, tensorboardx_run
from tui.parsers.verl_jsonl import is_file_logger_head
from tui.sources.discovery import NoLogFound
from tui.sources.logger_run import (
    JSONL,
    TENSORBOARD,
    LocalLoggerRun,
    local_candidates,
    local_logger_run,
)


def test_both_spellings_of_verls_jsonl_are_recognised_and_dumps_are_not():
    assert is_file_logger_head(JSONL_V06.read_bytes())
    assert is_file_logger_head(JSONL_V071.read_bytes())
    assert not is_file_logger_head(b'{"input": "q", "output": "a", "score": 1.0, "step": 1}\n')
    assert not is_file_logger_head(b'{"data": {}, "step": 1}\n')
    assert not is_file_logger_head(b"")


def test_the_newest_of_several_tensorboard_experiments_is_read_and_said(tmp_path):
    logs = tmp_path / "tensorboard_log" / "proj"
    tensorboardx_run(logs / "old", range(3), age_s=3600)
    tensorboardx_run(logs / "new", range(5))
    source, note = local_logger_run(tmp_path)
    assert isinstance(source, LocalLoggerRun)
    assert source.path == logs / "new" and source.label == str(logs / "new")
    assert source.logger_files.tensorboard == logs / "new" and source.logger_files.jsonl is None
    assert source.logger_files.alone
    assert f"reading TensorBoard event files {logs / 'new'}" in note
    assert "newest of 2 experiment(s)" in note and "--log names another" in note


def test_verls_v03_layout_with_event_files_straight_under_tensorboard_log(tmp_path):
    shutil.copytree(RESUMED, tmp_path / "tensorboard_log")
    source, note = local_logger_run(tmp_path)
    assert source.logger_files.tensorboard == tmp_path / "tensorboard_log"
    assert "--log" not in note  # the only experiment: nothing else to name


def test_a_jsonl_among_dumps_is_the_run_and_its_tensorboard_twin_is_merged(tmp_path):
    dumps(tmp_path / "rollouts")
    (tmp_path / "proj").mkdir()
    shutil.copy(JSONL_V071, tmp_path / "proj" / "exp.jsonl")
    shutil.copytree(RESUMED, tmp_path / "tensorboard_log" / "proj" / "exp")
    tensorboardx_run(tmp_path / "tensorboard_log" / "proj" / "other", range(2), age_s=7200)
    kinds = sorted((c.kind, c.path.name) for c in local_candidates(tmp_path))
    assert kinds == [(JSONL, "exp.jsonl"), (TENSORBOARD, "exp"), (TENSORBOARD, "other")]
    os.utime(tmp_path / "proj" / "exp.jsonl")  # the newest
    source, note = local_logger_run(tmp_path)
    files = source.logger_files
    assert (files.jsonl, files.tensorboard) == (tmp_path / "proj" / "exp.jsonl",
                                                tmp_path / "tensorboard_log" / "proj" / "exp")
    assert f"and {tmp_path / 'tensorboard_log' / 'proj' / 'exp'}" in note
    assert "newest of 2 experiment(s)" in note


def test_a_named_jsonl_or_event_file_is_its_run_and_another_jsonl_is_not(tmp_path):
    source, note = local_logger_run(JSONL_V06)
    assert source.logger_files.jsonl == JSONL_V06 and note is None
    assert source.logger_files.written_at == JSONL_V06.stat().st_mtime
    event_file = sorted(RESUMED.iterdir())[0]
    source, _ = local_logger_run(event_file)
    assert source.logger_files.tensorboard == RESUMED
    dumps(tmp_path / "d")
    assert local_logger_run(tmp_path / "d" / "1.jsonl") is None
    with pytest.raises(NoLogFound, match="not a training log"):
        local_logger_run(tmp_path / "d")  # only dumps: no run


def test_an_empty_directory_says_what_was_looked_for(tmp_path):
    with pytest.raises(NoLogFound) as raised:
        local_logger_run(tmp_path)
    message = str(raised.value)
    assert "TensorBoard event files" in message and "file-logger JSONL" in message
    assert "not a training log" in message


def test_event_files_deeper_than_discovery_looks_are_not_found(tmp_path):
    tensorboardx_run(tmp_path / "a" / "b" / "c" / "d", range(2))
    with pytest.raises(NoLogFound):
        local_logger_run(tmp_path)
    tensorboardx_run(tmp_path / "a" / "b" / "c2", range(2))
    assert local_logger_run(tmp_path)[0].path == tmp_path / "a" / "b" / "c2"


async def test_the_source_streams_no_console_bytes(tmp_path):
    source, _ = local_logger_run(JSONL_V06)
    assert await source.connect() is None
    assert [event async for event in source.stream(0, follow=True)] == []
    assert await source.read_range(0, 100) == b""
    await source.close()
