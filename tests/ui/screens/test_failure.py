"""Reading a crash in two keys, on real logs: ``f`` then ``enter``, or ``w`` on the dashboard.

The failure's block is read by byte range through the run's own source (a
LocalFile here, as in the dashboard), Ray's process prefixes are taken off,
and the exception line is its own widget, scrolled into view.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.corpus import verl_log
from tests.ui.test_dashboard import open_app, text_of, wait_for
from tests.ui.test_drilldown import first_steps
from tui.ui.screens.failure import FailureScreen
from tui.ui.screens.findings import FindingsScreen
from tui.ui.screens.step_detail import StepDetailScreen
from tui.ui.widgets.failure_text import FailureText

OOM = verl_log("018")  # a CUDA OOM traceback, the whole log
ACTOR_DIED = verl_log("009")  # Ray-prefixed, an ActorDiedError under Hydra's error


def exception_text(app) -> str:
    return text_of(app.screen.query_one("#failure-exception"))


async def crashed(pilot, app) -> None:
    await wait_for(pilot, lambda: any(f.rule == "crash" for f in app.findings), "the crash finding", timeout=15)


async def test_findings_enter_opens_the_traceback_at_its_offset(tmp_path: Path) -> None:
    log = first_steps(tmp_path, 12)
    with log.open("ab") as out:  # the run crashes after step 12: outside every step's Log tab
        out.write(OOM.read_bytes())
    app = open_app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await crashed(pilot, app)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FindingsScreen), "the findings")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, FailureScreen), "the failure", timeout=15)
        await wait_for(pilot, lambda: "OutOfMemoryError" in exception_text(app), "the exception line", timeout=15)
        title = text_of(app.screen.query_one("#title"))
        assert "after step 12" in title and "torch.OutOfMemoryError" in title
        # The exception line is on screen, not below the fold of a long traceback.
        view = app.screen.query_one(FailureText)
        line = app.screen.query_one("#failure-exception")
        await pilot.pause(0.2)
        assert view.region.contains_region(line.region.intersection(view.region))
        assert line.region.y < view.region.bottom
        # o: the step the failure followed
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen), "the step")
        assert app.screen.step == 12


async def test_w_on_the_dashboard_opens_the_crash_ray_prefixes_off(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    shutil.copy(ACTOR_DIED, log)
    app = open_app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await crashed(pilot, app)
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, FailureScreen), "the failure", timeout=15)
        # The line the block's reading named as what failed, marked, prefixes off.
        block = app.model.crash_blocks[app.screen.finding.offset]
        words = block.exception.split()[:3]
        await wait_for(pilot, lambda: exception_text(app).lstrip().startswith("▶")
                       and all(word in exception_text(app) for word in words), "the exception line",
                       timeout=15)
        body = "\n".join(text_of(widget) for widget in app.screen.query(".failure-lines"))
        assert "pid=" not in exception_text(app)
        assert "(TaskRunner pid=" not in body and "(main_task pid=" not in body
        await pilot.press("escape")
        assert app.screen is app.dashboard


async def test_enter_on_a_metric_finding_opens_its_latest_step(tmp_path: Path) -> None:
    log = first_steps(tmp_path, 40)  # the real run breaks warning bands from its first steps
    app = open_app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: bool(app.findings), "a finding")
        await pilot.press("f", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen), "the step")
        finding = next(f for f in app.findings if f.last_step == app.screen.step)
        assert finding.offset is None
