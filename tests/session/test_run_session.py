"""One watched run as one object: loaded once, or followed with changes told to a listener."""

from __future__ import annotations

import asyncio
import shutil

from tests.support import RUN, step_lines, until
from tui.rules.findings import Severity
from tui.session.run_session import RunChanged, RunSession
from tui.sources.local_file import LocalFile
from tui.sources.logger_run import local_logger_run


async def test_load_reads_the_whole_run_and_judges_it():
    session = RunSession(LocalFile(RUN))
    await session.connect()
    try:
        assert await session.load() == []  # nothing to tell: one console log, no logger files
        findings = session.judge()
    finally:
        await session.close()
    assert session.model.last_step == 1120 and session.model.finished
    assert findings is session.findings and findings
    assert not [f for f in findings if f.severity is Severity.CRITICAL]  # a healthy real run


async def test_load_merges_the_logger_files_of_a_run_without_a_console(tmp_path):
    from tests.support import RESUMED

    shutil.copytree(RESUMED, tmp_path / "tensorboard_log" / "proj" / "exp")
    source, _ = local_logger_run(tmp_path)
    session = RunSession(source, run_dir=tmp_path)
    await session.connect()
    await session.load()
    assert session.model.last_step == 6 and "critic/score/mean" in session.model.series


async def test_following_tells_the_listener_of_each_change_until_cancelled(tmp_path):
    lines = step_lines(5)
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(lines[:3]))
    session = RunSession(LocalFile(log, poll_seconds=0.05), watch_accelerators=False)
    changes: list[RunChanged] = []
    session.listen(changes.append)
    await session.connect()
    following = asyncio.create_task(session.follow())
    try:
        await until(lambda: session.model.last_step == 3, what="the first three steps")
        told = len(changes)
        with log.open("ab") as out:
            out.write(b"".join(lines[3:]))
        await until(lambda: session.model.last_step == 5, what="the appended steps")
        assert any(change.model for change in changes[told:])
        log.write_bytes(lines[0])  # the run restarted: the log is truncated and rewritten
        await until(lambda: any(change.notice and "truncated" in change.notice[0] for change in changes),
                    what="the truncation's notice")
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await session.close()
    assert following.cancelled()


async def test_a_new_critical_finding_is_announced_once_and_runs_the_hook(tmp_path):
    from tests.support import healthy_then_nan

    log, nan_line = healthy_then_nan(tmp_path)
    with log.open("ab") as out:
        out.write(nan_line)
    hook_out = tmp_path / "hook.json"
    session = RunSession(LocalFile(log), on_critical=f"cat >> {hook_out}")
    await session.connect()
    await session.load()
    session.judge()
    assert [f.rule for f in session.new_criticals()] == ["loss-nan"]
    session.judge()
    assert session.new_criticals() == []  # announced already
    await until(lambda: hook_out.exists() and hook_out.read_text().count("loss-nan") == 1,
                what="the hook's JSON")
