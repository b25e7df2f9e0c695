"""80×24 first: what each screen drops when narrow, measured at 80×24 on real logs.

The verdict and the state words go last of all: the header keeps ``✖ CRIT
stalled`` on its one progress row (no wrap pushing the panels down), the
findings keep the reason whole, the steps table keeps its rules column.
"""

from __future__ import annotations

import os
import time

from tests.support import dashboard_on
from tests.ui.test_dashboard import open_app, text_of, wait_for
from tui.sources.local_file import LocalFile
from tests.ui.test_drilldown import first_steps
from tui.ui.screens.findings import FindingsScreen
from tui.ui.widgets.run_header import RunHeader


async def test_a_stalled_run_keeps_its_verdict_on_one_header_row(tmp_path):
    log = first_steps(tmp_path, 40)
    hours_ago = time.time() - 2 * 3600
    os.utime(log, (hours_ago, hours_ago))  # no new step for two hours: stalled
    app = open_app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "CRIT" in text_of(app.dashboard.header), "the verdict",
                       timeout=15)
        header = app.dashboard.query_one(RunHeader)
        rows = text_of(header).splitlines()
        assert "✖ CRIT" in rows[1] and "stalled" in rows[1] and "step 40" in rows[1]
        assert header.region.height <= 3 and app.dashboard.grid.region.y == header.region.bottom


async def test_the_watching_note_gives_its_row_back(tmp_path):
    log = first_steps(tmp_path, 3)
    app = dashboard_on(LocalFile(log, poll_seconds=0.05),
                       note="watching " + "a/very/long/path/" * 10 + "grpo.log")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        header = app.dashboard.header
        assert header.region.height == 3  # one row for the note, cut, never wrapped
        header._clear_ok_status()  # what the timer does after OK_STATUS_SECONDS
        await pilot.pause(0.1)
        assert header.region.height == 2


async def test_findings_keep_the_reason_whole_at_80_columns(tmp_path):
    app = open_app(first_steps(tmp_path, 40))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: any(f.rule == "kl-high" for f in app.findings), "kl-high",
                       timeout=15)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FindingsScreen), "the findings")
        await pilot.pause(0.2)
        table = text_of(app.screen.query_one("DataTable"))
        assert "above 0.03" in table and "kl-high" in table


async def test_a_big_terminal_shows_more_panels_not_taller_blocks(tmp_path):
    """200×50 and 120×40 bring the clip fraction, response clip ratio, throughput and
    memory panels; 80×24 keeps the eight core panels."""
    app = open_app(first_steps(tmp_path, 20))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 20, "20 steps")
        await pilot.pause(0.3)
        shown = [panel.id for panel in app.dashboard.grid.shown_panels()]
        assert len(shown) == 12 and "panel-clipfrac" in shown
        clipfrac = app.dashboard.query_one("#panel-clipfrac")
        await wait_for(pilot, lambda: "actor/pg_clipfrac" in text_of(clipfrac), "the clip fraction")
        assert clipfrac.region.height <= 17
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.3)
        assert len(app.dashboard.grid.shown_panels()) == 8


async def test_a_half_pane_keeps_every_key_metrics_value_change_and_sparkline(tmp_path):
    """80×12 (a half-height tmux split): bordered panels were title rows with the numbers
    gone; compact, each key metric is a line of its own, and a bigger pane gets them back."""
    from textual.widgets import Sparkline

    from tui.model.aliases import DASHBOARD_CONCEPTS
    from tui.ui.widgets.metric_panel import PanelStats

    app = open_app(first_steps(tmp_path, 40))
    async with app.run_test(size=(80, 12)) as pilot:
        await wait_for(pilot, lambda: app.model.last_step == 40, "40 steps", timeout=15)
        await pilot.pause(0.3)
        grid = app.dashboard.grid
        assert grid.compact
        panels = grid.shown_panels()
        assert [panel.concept for panel in panels] == list(DASHBOARD_CONCEPTS)
        for panel in panels:
            stats = text_of(panel.query_one(PanelStats))
            assert "Δ" in stats and stats.split()[0] != "no"
            sparkline = panel.query_one(Sparkline)
            assert sparkline.region.height == 1 and sparkline.region.width >= 20 and sparkline.data
            assert panel.region.height == 1 and panel.region.bottom <= app.size.height - 1
        assert "step 40" in text_of(app.dashboard.header)
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: not grid.compact, "the bordered panels again")
        await pilot.pause(0.3)
        assert all(panel.region.height >= 4 for panel in grid.shown_panels())
