"""``rlwatch compare`` as a user runs it: two real runs in a real tmux, keys sent as keystrokes."""

from __future__ import annotations

import shutil

import pytest

from tests.corpus import verl_log
from tests.e2e.tmux_session import poll, tmux_session

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_two_runs_of_a_sweep_side_by_side_at_80x24(tmp_path):
    for name, prefix in (("fsdp", "034"), ("megatron", "035")):
        (tmp_path / "sweep" / name).mkdir(parents=True)
        shutil.copy(verl_log(prefix), tmp_path / "sweep" / name / "train.log")
    (tmp_path / "home").mkdir()
    with tmux_session() as tmux:

        def showing(needle: str):
            def check() -> str | None:
                text = tmux.screen()
                return text if needle in text else None
            return check

        tmux.start(["compare", str(tmp_path / "sweep" / "fsdp"), str(tmp_path / "sweep" / "megatron")],
                   {"HOME": str(tmp_path / "home")})
        charts = poll(showing("A 210 finished  B 105 finished"), 30, "both runs read to their end")
        assert "A ⣿ fsdp/train" in charts and "B • megatron/train" in charts
        assert "train reward" in charts and "chart 1 of" in charts
        tmux.keys("3")
        settings = poll(showing("settings differ"), 10, "the settings that differ")
        assert "actor_rollout_ref.model.path" in settings
        tmux.keys("q")
        poll(showing("rlwatch-exited=0"), 10, "rlwatch to quit with status 0")
