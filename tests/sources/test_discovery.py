"""Choosing the training log inside a run directory."""

import os

import pytest

from tui.sources.base import SourceError
from tui.sources.discovery import find_training_log

STEP = b"step:1 - critic/score/mean:0.5 - actor/pg_loss:0.1\n"


def touch(path, data: bytes, mtime: float):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))


def test_newest_log_with_step_lines_wins_over_newer_chatter(tmp_path):
    touch(tmp_path / "old.log", STEP, 1000)
    touch(tmp_path / "train.out", b"noise\n" + STEP, 2000)
    touch(tmp_path / "ray.txt", b"no steps here\n", 3000)
    choice = find_training_log(tmp_path)
    assert choice.path == tmp_path / "train.out" and "with verl step lines" in choice.reason


def test_logs_in_subdirectories_are_found(tmp_path):
    touch(tmp_path / "logs" / "2025" / "grpo.log", STEP, 1000)
    assert find_training_log(tmp_path).path == tmp_path / "logs" / "2025" / "grpo.log"


def test_step_lines_only_near_the_end_of_a_big_log(tmp_path):
    big = b"chatter line\n" * 800_000 + STEP  # ~10 MB: beyond the head sniff
    touch(tmp_path / "big.log", big, 1000)
    touch(tmp_path / "other.log", b"x\n", 500)
    assert find_training_log(tmp_path).path.name == "big.log"


def test_a_young_run_without_steps_yet_gets_its_newest_log(tmp_path):
    touch(tmp_path / "a.log", b"starting\n", 1000)
    touch(tmp_path / "b.log", b"starting ray\n", 2000)
    choice = find_training_log(tmp_path)
    assert choice.path.name == "b.log" and "none has step lines yet" in choice.reason


def test_a_directory_without_logs_says_what_to_do(tmp_path):
    (tmp_path / "data.parquet").write_bytes(b"PAR1")
    with pytest.raises(SourceError, match="--log FILE"):
        find_training_log(tmp_path)
