"""The header weighs the run's ETA against its scheduler's time limit (a Slurm job's); it
ticks (the time since the last step) only while the dashboard is on top, and redraws for the
rules' verdict only when it changed: Textual repaints the screen on top wherever the
dashboard beneath it changes."""

from __future__ import annotations

import os
import shutil
import time

from tests.corpus import REPO, verl_log
from tests.support import header_text, open_app, step_lines, wait_for
from tui.parsers.records import JobOutcome, JobRecord
from tui.rules.findings import Severity
from tui.ui.screens.steps import StepsScreen
from tui.ui.widgets.run_header import RunHeader


def job(limit_s: float, started_ago_s: float) -> JobRecord:
    return JobRecord("Slurm", "812", "RUNNING", JobOutcome.RUNNING, nodes=("gpu01",),
                     time_limit_s=limit_s, started_at=time.time() - started_ago_s)


async def test_a_limit_sooner_than_the_eta_is_a_warning_beside_it(tmp_path):
    log = tmp_path / "slurm-812.out"
    log.write_bytes(b"".join(step_lines(2))
                    + b"Training Progress:  15%|#5        | 3/20 [03:10<17:00, 60.00s/it]\n")
    app = open_app(log)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: "ETA" in header_text(app), "the ETA")
        header = app.dashboard.header
        app.model.apply([job(limit_s=600, started_ago_s=100)], now=time.time())
        header.show(app.model)
        await pilot.pause(0.1)
        assert "limit in 8m" in header_text(app) and "< ETA" in header_text(app)
        app.model.apply([job(limit_s=7200, started_ago_s=100)], now=time.time())
        header.show(app.model)
        await pilot.pause(0.1)
        assert "limit in 1h" in header_text(app) and "< ETA" not in header_text(app)


async def test_no_limit_no_field(tmp_path):
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(2)))
    app = open_app(log)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: "step" in header_text(app), "the step")
        app.model.apply([JobRecord("Slurm", "812", "RUNNING", JobOutcome.RUNNING,
                                   started_at=time.time())], now=time.time())
        app.dashboard.header.show(app.model)
        await pilot.pause(0.1)
        assert "limit in" not in header_text(app)


async def test_a_queued_job_says_so_instead_of_waiting_for_a_first_step(tmp_path):
    log = tmp_path / "slurm-813.out"
    log.write_bytes(b"")
    app = open_app(log)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: "waiting for the first step" in header_text(app), "the header")
        app.model.apply([JobRecord("Slurm", "813", "PENDING", JobOutcome.PENDING, "Priority")],
                        now=time.time())
        app.dashboard.header.show(app.model)
        await pilot.pause(0.1)
        assert "queued: Slurm PENDING (Priority)" in header_text(app)
        assert "waiting for the first step" not in header_text(app)


async def test_a_run_that_crashed_before_its_first_step_is_not_waiting_for_one(tmp_path):
    log = tmp_path / "grpo.log"
    shutil.copy(verl_log("018"), log)  # CUDA out of memory before step 1
    app = open_app(log)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: "crashed: torch.OutOfMemoryError" in header_text(app), "the verdict")
        assert "no step" in header_text(app)
        assert "waiting for the first step" not in header_text(app)


async def test_the_header_ticks_only_on_top_and_redraws_only_for_a_new_verdict(tmp_path):
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(5)))
    app = open_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.model.last_step == 5, "the steps read")
        header = app.dashboard.query_one(RunHeader)
        redraws: list[float] = []
        refresh = header.refresh

        def noted(*regions, **flags):
            redraws.append(1.0)
            return refresh(*regions, **flags)

        header.refresh = noted
        await pilot.pause(1.2)
        assert redraws  # on top: the clock ticks

        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, StepsScreen), "the steps screen")
        redraws.clear()
        await pilot.pause(2.2)
        assert redraws == []  # under the steps screen: nothing to see, nothing redrawn

        header.show_health(Severity.WARNING, "1 warning")
        header.show_health(Severity.WARNING, "1 warning")
        assert len(redraws) == 1


BAR_8_OF_16 = (b"Training Progress:  50%|#####     | 8/16 [01:20<01:20, 10.00s/it]\n"
               b"step:8 - critic/score/mean:0.5 - timing_s/step:10\n")


async def test_a_crashed_run_shows_no_eta(tmp_path):
    log = tmp_path / "grpo.log"
    log.write_bytes(BAR_8_OF_16 + b"Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n"
                    b"RuntimeError: boom\n")
    app = open_app(log)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(pilot, lambda: "crashed: RuntimeError: boom" in header_text(app), "the verdict")
        assert "ETA —" in header_text(app) and "ETA 1m" not in header_text(app)


async def test_a_silent_run_shows_how_long_since_its_last_step_not_a_frozen_eta(tmp_path):
    log = tmp_path / "grpo.log"
    log.write_bytes(BAR_8_OF_16)
    hour_ago = time.time() - 3600
    os.utime(log, (hour_ago, hour_ago))  # nothing written for an hour; a step takes 10 s
    app = open_app(log)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(pilot, lambda: "no step for" in header_text(app), "the time since the last step")
        text = header_text(app)
        assert "no step for 1 h" in text and "a step takes 10 s" in text and "ETA" not in text


async def test_a_crash_on_one_rank_of_many_names_the_rank_in_the_verdict(tmp_path):
    log = tmp_path / "ddp.log"
    shutil.copy(REPO / "tests" / "fixtures" / "logs" / "generated" / "ddp" / "gloo_rank1_raise.log", log)
    app = open_app(log)
    async with app.run_test(size=(200, 30)) as pilot:
        await wait_for(pilot, lambda: "crashed: rank 1 on localhost: RuntimeError: reward worker"
                       in header_text(app), "the verdict with its rank")
