"""A followed job that the controller forgets, on a cluster without accounting: Slurm has
nothing left to say, so its last word is kept and marked as such, no more is asked, and the
output file alone tells how the run goes on (a cluster of its own: forgetting is for all jobs)."""

from __future__ import annotations

import asyncio

import pytest

from tests.sources.slurm.conftest import cluster_behind_login, prints_steps
from tests.support import until
from tui.session.run_session import RunSession
from tui.sources.slurm.job_log import FORGOTTEN_NOTE, SlurmJobLog
from tui.sources.slurm.target import parse_slurm_target


@pytest.fixture(scope="module")
def forgetful(tmp_path_factory):
    with cluster_behind_login(tmp_path_factory.mktemp("forgetful")) as (cluster, home, _):
        yield cluster, home


def test_a_job_the_controller_forgets_keeps_its_last_word_and_is_asked_no_more(forgetful, monkeypatch):
    cluster, home = forgetful
    monkeypatch.setenv("HOME", str(home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    job = cluster.submit("forgotten", prints_steps(2, "sleep 600\n"))
    cluster.wait_for(job, "RUNNING")

    async def follow() -> None:
        session = RunSession(SlurmJobLog(parse_slurm_target(f"slurm://login/{job}"), poll_s=0.3),
                             watch_accelerators=False)
        notices: list[str] = []
        session.listen(lambda change: change.notice and notices.append(change.notice[0]))
        await session.connect()
        following = asyncio.create_task(session.follow())
        try:
            await until(lambda: session.model.last_step == 1, timeout=30, what="the steps")
            await asyncio.to_thread(cluster.forget_jobs)
            await until(lambda: session.model.job.note == FORGOTTEN_NOTE, timeout=30,
                        what="the forgotten job's note")
            assert session.model.job.state == "RUNNING"  # the last word, not a guess
            assert any("accounting is off there (sacct: Slurm accounting storage is disabled)" in n
                       and FORGOTTEN_NOTE in n for n in notices)
            asked = len(notices)
            await asyncio.sleep(1.0)  # three polls' time: nothing more is asked, or said
            assert len(notices) == asked
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            await session.close()

    asyncio.run(follow())
