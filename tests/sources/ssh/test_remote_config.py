"""A remote run's config comes over SSH as one byte range of its log's head."""

from __future__ import annotations

import shutil

from tests.corpus import verl_log
from tui.parsers.log_scanner import NEEDLES
from tui.session.run_session import RunSession
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget


async def test_the_config_of_a_run_on_the_box(client_home, tmp_path):
    shutil.copy(verl_log("035"), tmp_path / "grpo.log")
    session = RunSession(RemoteLog(RemoteTarget("gpu", str(tmp_path / "grpo.log")), NEEDLES),
                         watch_accelerators=False)
    await session.connect()
    try:
        await session.load()
        config = await session.read_config()
    finally:
        await session.close()
    assert config is not None and config.complete
    assert config.values["actor_rollout_ref.actor.megatron.pipeline_model_parallel_size"] == "2"
    assert "data.train_batch_size" in config.overridden
