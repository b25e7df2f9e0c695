"""The app's own housekeeping: the collector kept off the objects that live as long as it
while it runs, and given them back when it ends."""

from __future__ import annotations

import gc
import shutil
import weakref
from pathlib import Path

from tests.support import RUN, open_app, wait_for


def copy_run(tmp_path: Path) -> Path:
    log = tmp_path / "grpo.log"
    shutil.copy(RUN, log)
    return log


async def test_once_the_run_is_judged_its_objects_are_out_of_the_collectors_reach(tmp_path):
    app = open_app(copy_run(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.findings and not app.engine.behind, "the run judged")
        await wait_for(pilot, lambda: gc.get_freeze_count() > 0, "the heap frozen")
        frozen = gc.get_freeze_count()
        # Python, Textual and the dashboard: tens of thousands of objects no full
        # collection walks again (one walked them all in 50–120 ms on a 100k-step run).
        assert frozen > 20_000
        for _ in range(3):  # judged again (every 5 s while idle): frozen once, not again
            app._judge_soon()
            await pilot.pause(0.2)
        # (Frozen objects still go when their last reference does: the count only falls.)
        assert gc.get_freeze_count() <= frozen


class Cycle:
    """An object in a reference cycle: only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


async def test_what_was_frozen_goes_back_to_the_collector_when_the_app_ends(tmp_path):
    app = open_app(copy_run(tmp_path))
    cycle = Cycle()
    gone = weakref.ref(cycle)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: gc.get_freeze_count() > 0, "the heap frozen")
    assert gc.get_freeze_count() == 0
    del cycle
    gc.collect()
    # A frozen object is never collected: had the heap stayed frozen, a process running
    # apps one after another (this test suite) would keep every cycle alive at a freeze.
    assert gone() is None


async def test_up_to_date_once_the_run_as_read_is_drawn_and_judged(tmp_path):
    log = copy_run(tmp_path)
    app = open_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count and app.up_to_date, "the run drawn and judged")
        assert app.findings is not None and not app.engine.behind
        steps = app.model.step_count
        with open(log, "ab") as handle:  # one more step: drawn and judged again, soon
            handle.write(f"step:{app.model.step_index.last_step() + 1} - critic/score/mean:0.5\n".encode())
        await wait_for(pilot, lambda: app.model.step_count == steps + 1 and app.up_to_date,
                       "the new step drawn and judged")


async def test_a_log_growing_steadily_is_redrawn_twice_a_second_not_on_every_step(tmp_path):
    # A run logging 20 step lines a second was redrawn ten times a second: every panel
    # rendered and the run judged each time, a sixth of a core for frames no one reads.
    import asyncio
    import time

    from tui.ui.app import FOLLOW_REDRAW_SECONDS

    log = copy_run(tmp_path)
    app = open_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count and app.up_to_date, "the run drawn and judged")
        redraws: list[float] = []
        show_model = app.dashboard.show_model

        async def counted() -> None:
            redraws.append(time.monotonic())
            await show_model()

        app.dashboard.show_model = counted  # type: ignore[method-assign]
        step = app.model.step_index.last_step()
        began = time.monotonic()
        with open(log, "ab") as handle:
            for _ in range(40):  # two seconds of 20 step lines a second
                step += 1
                handle.write(f"step:{step} - critic/score/mean:0.5\n".encode())
                handle.flush()
                await asyncio.sleep(0.05)
        await wait_for(pilot, lambda: app.model.step_index.last_step() == step and app.up_to_date,
                       "the last step drawn")
    # Forty changes, drawn in a few frames however slowly a loaded machine wrote them.
    assert 2 <= len(redraws) <= (redraws[-1] - began) / FOLLOW_REDRAW_SECONDS + 2
    assert all(later - earlier >= FOLLOW_REDRAW_SECONDS * 0.9 for earlier, later in zip(redraws, redraws[1:]))
