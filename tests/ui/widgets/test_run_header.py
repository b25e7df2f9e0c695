"""The dashboard's header ticks (the time since the last step) only while the dashboard is
on top, and redraws for the rules' verdict only when it changed: Textual repaints the screen
on top wherever the dashboard beneath it changes."""

from __future__ import annotations

from tests.support import open_app, step_lines, wait_for
from tui.rules.findings import Severity
from tui.ui.screens.steps import StepsScreen
from tui.ui.widgets.run_header import RunHeader


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
