"""A session reads its run's config once, by byte range from the head of the log."""

from __future__ import annotations

import shutil

from tests.corpus import verl_log
from tests.support import RUN
from tui.parsers.run_config import CONFIG_HEAD_BYTES
from tui.session.run_session import RunSession
from tui.sources.local_file import LocalFile
from tui.sources.logger_run import local_logger_run


async def loaded(log) -> RunSession:
    session = RunSession(LocalFile(log), watch_accelerators=False)
    await session.connect()
    await session.load()
    return session


async def test_the_config_is_read_from_the_logs_head_and_kept_on_the_model(tmp_path):
    log = tmp_path / "grpo.log"
    shutil.copy(verl_log("034"), log)  # printed 64 kB into a 600 kB log, behind a Ray prefix
    session = await loaded(log)
    config = await session.read_config()
    assert config is session.model.config and config is not None and config.complete
    assert config.values["algorithm.adv_estimator"] == "gpg"
    assert log.read_bytes()[config.offset:].startswith(b"\x1b[36m(TaskRunner pid=678203)\x1b[0m {'actor_")
    # Read once: what the file's head says later is not read again.
    log.write_bytes(b"x" * len(log.read_bytes()))
    assert await session.read_config() is config


async def test_a_log_that_has_not_printed_it_yet_is_looked_at_again_once_it_grew(tmp_path):
    text = verl_log("027").read_bytes()
    at = text.index(b"(TaskRunner pid=247607) {'actor_rollout_ref'")
    log = tmp_path / "grpo.log"
    log.write_bytes(text[:at])  # the launch command and Ray's start: only the overrides so far
    session = await loaded(log)
    early = await session.read_config()
    assert early is not None and not early.complete and early.values["data.train_batch_size"] == "128"
    with log.open("ab") as out:
        out.write(text[at:])
    assert await session.read_config() is early  # not read again before the session read more
    await session.load()
    later = await session.read_config()
    assert later is not None and later.complete and later.values["actor_rollout_ref.rollout.n"] == "8"


async def test_a_run_with_no_config_or_no_console_has_none():
    session = await loaded(RUN)  # run 032's log starts at its first step
    assert await session.read_config() is None
    assert session.model.read_to > CONFIG_HEAD_BYTES  # and it is not asked again
    assert await session.read_config() is None


async def test_a_run_of_logger_files_only_has_no_config(tmp_path):
    from tests.support import RESUMED

    shutil.copytree(RESUMED, tmp_path / "tensorboard_log" / "proj" / "exp")
    source, _ = local_logger_run(tmp_path)
    session = RunSession(source, run_dir=tmp_path, watch_accelerators=False)
    await session.connect()
    await session.load()
    assert await session.read_config() is None
