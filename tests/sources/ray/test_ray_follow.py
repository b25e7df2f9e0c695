"""The dashboard following a Ray job as it runs: the driver log arrives through Ray's log
stream while the job is RUNNING, the job's end comes from its state, and a step's text is
read back by byte range (from the local spool) for the step detail."""

from __future__ import annotations

import pytest

from tests.support import dashboard_on, go_to_step, open_detail, open_steps, wait_for
from tui.parsers.records import JobOutcome
from tui.rules.run_state import RunState, run_state
from tui.sources.ray.address import parse_ray_target
from tui.sources.ray.ray_job import RayJobLog


@pytest.fixture
def ray_user(ray_head, monkeypatch):
    """This process reaches the cluster as its users do: with Ray's token in the environment."""
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"):
        monkeypatch.setenv(name, ray_head.env[name])


async def test_the_dashboard_follows_a_running_job_to_its_end(ray_head, ray_user):
    job = ray_head.submit("rlw-live", 8, "finish", delay=0.4)
    source = RayJobLog(parse_ray_target(ray_head.target(job)), poll_s=0.5, quiet_s=1.0)
    app = dashboard_on(source, watch_accelerators=False)
    session = app.session
    note = await session.connect()
    assert note is not None and f"{job} (" in note
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            model = session.model
            await wait_for(pilot, lambda: (model.last_step or 0) >= 2, "the first steps", timeout=60)
            # Read while the job runs: the log stream, not a read after the end.
            assert model.job is not None and model.job.outcome == JobOutcome.RUNNING
            assert model.last_step < 8
            # The state is polled beside the log stream: either may come first.
            await wait_for(pilot, lambda: model.job.ended and model.last_step == 8, "the job's end", timeout=60)
            assert model.job.state == "SUCCEEDED"
            assert run_state(model, session.judge()) == RunState.FINISHED

            start, end = model.step_index.span(5)
            assert b"step:5 - " in await source.read_range(start, end)
            await open_steps(pilot, app)
            await go_to_step(pilot, app, 5)
            detail = await open_detail(pilot, app, 5)
            assert detail.step == 5
    finally:
        await session.close()
