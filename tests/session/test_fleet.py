"""A fleet's run, without a network: a run that cannot be read yet says why and is tried again
until it can, then followed; the changes reach whoever listens, with the run they are about."""

from __future__ import annotations

import asyncio

from tests.support import step_lines, until
from tui.session.fleet import FleetRun
from tui.session.run_session import RunSession
from tui.sources.base import SourceError
from tui.sources.local_file import LocalFile


def never() -> RunSession:
    raise AssertionError("a glob's row (and a run not opened here) makes no session")


async def test_a_run_not_there_yet_is_retried_until_it_is_then_followed(tmp_path):
    log = tmp_path / "train.log"
    heard = []
    run = FleetRun("late", "local", lambda: RunSession(LocalFile(log, poll_seconds=0.05),
                                                      watch_accelerators=False),
                   retry_s=(0.05,))
    run.listen(lambda who, change: heard.append(who))
    watching = asyncio.create_task(run.watch())
    try:
        await until(lambda: run.reach == "unreachable", 5, "the first refusal")
        assert "no such file" in run.problem
        log.write_bytes(b"".join(step_lines(3)))
        await until(lambda: run.session.model.last_step == 3, 10, "the steps once it is there")
        assert run.reach == "open" and run.problem is None
        with open(log, "ab") as handle:
            handle.write(step_lines(4)[-1])
        await until(lambda: run.session.model.last_step == 4, 10, "the next step, followed")
        assert heard and all(who is run for who in heard)
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
        await run.close()


async def test_a_glob_row_becomes_its_runs_once_it_can_be_expanded():
    attempts = []

    async def expand() -> list[FleetRun]:
        attempts.append(1)
        if len(attempts) < 3:
            raise SourceError("gpu: cannot connect: refused")
        return [FleetRun(name, "gpu", never) for name in ("a", "b")]

    row = FleetRun("runs/*", "gpu", never, retry_s=(0.01,), expand=expand)
    seen = []
    row.listen(lambda _, change: seen.append(row.problem))
    await asyncio.wait_for(row.watch(), 5)
    assert seen[:2] == ["gpu: cannot connect: refused"] * 2
    assert len(attempts) == 3 and [run.name for run in row.replaced_by] == ["a", "b"]
    assert row.session is None  # the row itself follows nothing
