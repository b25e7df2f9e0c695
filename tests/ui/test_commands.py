"""The command palette (ctrl+p) on a run that crashed: ``Crash`` opens its traceback as ``w``
does, and each finding has an entry that opens where it happened."""

from __future__ import annotations

from pathlib import Path

from tests.corpus import verl_log
from tests.support import first_steps
from tests.ui.test_dashboard import open_app, wait_for
from tui.ui.commands import HELP_CHARS, finding_help, finding_name
from tui.ui.screens.failure import FailureScreen
from tui.ui.screens.step_detail import StepDetailScreen

OOM = verl_log("018")  # a CUDA OOM traceback


async def test_crash_and_each_finding_are_in_the_palette(tmp_path: Path) -> None:
    log = first_steps(tmp_path, 12)
    with log.open("ab") as out:  # the run crashes after step 12
        out.write(OOM.read_bytes())
    app = open_app(log)
    async with app.run_test(size=(100, 36)) as pilot:
        await wait_for(pilot, lambda: any(f.rule == "crash" for f in app.findings), "the crash", timeout=15)
        await pilot.press("ctrl+p", *"crash")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, FailureScreen), "the traceback", timeout=15)
        crash = app.screen.finding
        assert crash.rule == "crash" and "OutOfMemoryError" in (crash.exception or "")
        await pilot.press("escape")
        # A metric's finding opens its latest step, as enter on the findings screen does.
        kl = next(f for f in app.findings if f.rule == "kl-high")
        assert finding_name(kl) == "finding kl-high actor/kl_loss"
        assert finding_help(kl).startswith(f"▲ WARN step {kl.last_step}: ")
        assert len(finding_help(crash)) <= HELP_CHARS  # the exception line, cut to one line
        await pilot.press("ctrl+p", *"finding kl-high")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen), "the finding's step")
        assert app.screen.step == kl.last_step


async def test_a_run_without_a_crash_offers_no_crash_entry(tmp_path: Path) -> None:
    app = open_app(first_steps(tmp_path, 12))
    async with app.run_test(size=(100, 36)) as pilot:
        await wait_for(pilot, lambda: bool(app.findings), "the findings")
        await pilot.press("ctrl+p", *"Crash")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert not isinstance(app.screen, FailureScreen)
