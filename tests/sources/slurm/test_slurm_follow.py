"""Following a Slurm job in a session, as the dashboard does: a queued job is pending until
Slurm starts it, then its output file is read as it grows, the nodes Slurm names get their
accelerators read (through the login node), and the job's end arrives as the scheduler's word.

This module runs last of the Slurm tests: the time-limit test at its end waits on the
job the cluster fixture started first, and the others' time is spent meanwhile."""

from __future__ import annotations

import asyncio
import json

import pytest
from tests.sources.slurm.conftest import prints_steps
from tests.support import dashboard_on, header_text, rlwatch_as, until, wait_for
from tui.parsers.records import JobOutcome
from tui.session.run_session import RunSession
from tui.sources.slurm.job_log import SlurmJobLog
from tui.sources.slurm.target import parse_slurm_target


def test_a_queued_job_is_followed_from_pending_to_its_steps_nodes_and_end(slurm_world, monkeypatch):
    monkeypatch.setenv("HOME", str(slurm_world.home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    cluster = slurm_world.cluster
    job = cluster.submit("queued", prints_steps(3, "sleep 600\n"), "--hold")

    async def follow() -> None:
        source = SlurmJobLog(parse_slurm_target(f"slurm://login/{job}"), poll_s=0.3)
        session = RunSession(source)
        seen: list[str] = []
        session.listen(lambda change: session.model.job and seen.append(session.model.job.state))
        note = await session.connect()
        assert f"Slurm job {job} on login is PENDING (JobHeldUser)" in note
        following = asyncio.create_task(session.follow())
        try:
            await until(lambda: session.model.job is not None, what="the job's state")
            assert session.model.job.outcome == JobOutcome.PENDING
            assert session.model.step_count == 0
            await asyncio.to_thread(cluster.run, "scontrol", "release", job)
            await until(lambda: session.model.last_step == 2, timeout=30, what="the job's steps")
            job_now = session.model.job
            assert (job_now.state, job_now.nodes) == ("RUNNING", ("localhost",))
            assert job_now.time_limit_s is None  # the partition's MaxTime=INFINITE
            # The node's accelerators are read over a connection through the login node; the
            # login node itself is not a host of the run.
            await until(lambda: "localhost" in session.accelerators.status, timeout=30,
                        what="the node's accelerator status")
            assert "login" not in session.accelerators.status
            await asyncio.to_thread(cluster.run, "scancel", job)
            await until(lambda: session.model.job.state == "CANCELLED", timeout=30,
                        what="the cancellation")
            assert seen.index("PENDING") < seen.index("RUNNING") < seen.index("CANCELLED")
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            await session.close()

    asyncio.run(follow())


async def test_the_dashboard_on_a_failed_job_says_so_in_its_header(slurm_world, monkeypatch):
    monkeypatch.setenv("HOME", str(slurm_world.home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    cluster = slurm_world.cluster
    job = cluster.submit("shown", prints_steps(3, "exit 3\n"))
    await asyncio.to_thread(cluster.wait_for, job, "FAILED")
    source = SlurmJobLog(parse_slurm_target(f"slurm://login/{job}"))
    app = dashboard_on(source)
    app.sessions[0].note = await app.sessions[0].connect()  # as `rlwatch TARGET` connects first
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_for(pilot, lambda: f"Slurm job {job} FAILED" in header_text(app),
                           "the job's state in the verdict", timeout=30)
            assert "step 2" in header_text(app)
            assert f"login:{cluster.output('shown', job)}" in header_text(app)
    finally:
        await source.close()


@pytest.mark.last  # its job was submitted with the cluster; the rest of the suite runs meanwhile
def test_a_job_past_its_time_limit_is_crashed_with_timeout(slurm_world):
    cluster, job = slurm_world.cluster, slurm_world.timeout_job
    cluster.wait_for(job, "TIMEOUT", timeout=150)  # a 1-minute limit, checked every 30 s or so
    done = rlwatch_as(slurm_world.home, "check", f"slurm://login/{job}", "--json")
    result = json.loads(done.stdout)
    assert done.returncode == 2
    assert result["run"]["state"] == "crashed"
    assert result["run"]["last_step"] == 2
    (finding,) = [f for f in result["findings"] if f["rule"] == "job-failed"]
    assert finding["exception"] == f"Slurm job {job} TIMEOUT: TimeLimit, signal 15"
