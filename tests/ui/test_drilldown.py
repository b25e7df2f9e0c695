"""Drilling into a step, by keys alone, on real log files (no mocked sources).

dashboard → steps → step detail → chart → step detail and back, on a copy of
a whole real GRPO run and on a run that writes rollout and validation dumps;
the step's text read by byte range through the source; log text with markup
in it shown literally; and a 100k-step model that opens as fast as a small one.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import time
from pathlib import Path

from textual.geometry import Region

from tests.support import (
    RUN,
    count_figure_builds,
    dashboard_on,
    first_steps,
    go_to_step,
    highlight_metric,
    metric,
    open_app,
    open_detail,
    open_steps,
    shown_step,
    step_line,
    table,
    text_of,
    wait_for,
    worst_sample_of_step_2,
    write_dumps,
)
from tui.parsers.records import StepRecord
from tui.sources.local_file import LocalFile
from tui.ui.app import RlwatchApp
from tui.ui.format import format_exact, format_number
from tui.ui.screens.chart import ChartScreen
from tui.ui.screens.dashboard import DashboardScreen
from tui.ui.screens.findings import FindingsScreen
from tui.ui.screens.help import HelpScreen
from tui.ui.screens.step_detail import StepDetailScreen
from tui.ui.screens.steps import StepsScreen
from tui.ui.widgets.chart_plot import ChartPlot
from tui.ui.widgets.sample_card import SampleCard
from tui.ui.widgets.step_log import StepLog
from tui.ui.widgets.step_metrics import StepMetrics

LAST_STEP = 1120


def copy_run(tmp_path: Path) -> Path:
    log = tmp_path / "grpo.log"
    shutil.copy(RUN, log)
    return log


def metric_cells(app: RlwatchApp, key: str) -> list[str]:
    """The step detail's row for ``key``, cell by cell, as plain text."""
    metrics = app.screen.query_one(StepMetrics)
    return [cell.strip() for cell in metrics.cells(key) or []]


def screen_text(app: RlwatchApp) -> str:
    """Every Static on the current screen (cards, notes, text blocks), as plain text."""
    return "\n".join(text_of(widget) for widget in app.screen.query("Static"))


async def test_g_34_enter_shows_step_34s_policy_loss(tmp_path):
    pg_loss = metric(step_line(34), "actor/pg_loss")
    app = open_app(copy_run(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == str(LAST_STEP), "the whole run read")
        await open_steps(pilot, app)
        assert table(app).cursor_step == LAST_STEP  # newest first
        await go_to_step(pilot, app, 34)
        row = next(line for line in text_of(table(app)).splitlines() if line.split()[:1] == ["34"])
        assert format_number(pg_loss) in row.split()

        await open_detail(pilot, app, 34)
        assert metric_cells(app, "actor/pg_loss")[:2] == ["actor/pg_loss", format_exact(pg_loss)]


async def test_walk_dashboard_steps_detail_chart_detail_and_back(tmp_path):
    app = open_app(copy_run(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == str(LAST_STEP), "the whole run read")
        # Dashboard: the first panel has the focus; down moves a row of the 2-column grid.
        assert app.screen.focused.id == "panel-reward"
        await pilot.press("down", "c")
        await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the policy loss chart")
        assert app.screen.key == "actor/pg_loss"
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the dashboard")

        await open_steps(pilot, app)
        assert "following new steps" in text_of(app.screen.query_one("#title"))
        await pilot.press("j", "j", "k")  # rows move; the newest is on top
        assert table(app).cursor_step == LAST_STEP - 1
        # Off the top row the table no longer follows, and says so.
        assert f"on step {LAST_STEP - 1}" in text_of(app.screen.query_one("#title"))
        await go_to_step(pilot, app, 34)
        detail = await open_detail(pilot, app, 34)
        title = detail.query_one("#title")
        # The first row names the step, of the run's steps, its s/it, and follows [ and ].
        assert title.region.y == 0 and re.search(r"step 34 of 1120\b.*\d s/it", text_of(title))
        assert "kl-high" in text_of(detail.query_one("#rules"))  # KL 0.053 is above 0.03
        phases = text_of(detail.query_one("PhaseBar"))
        assert "gen" in phases and "update_actor" in phases and "step" not in phases.split()

        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: detail.step == 35, "the next step")
        assert "step 35 of" in text_of(title) and title.region.y == 0
        assert metric_cells(app, "actor/kl_loss")[1] == format_exact(metric(step_line(35), "actor/kl_loss"))
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: detail.step == 34, "the previous step")

        await highlight_metric(pilot, app, "actor/pg_loss")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the chart of the metric")
        chart = app.screen
        assert chart.key == "actor/pg_loss" and "step 34 =" in text_of(chart.query_one("#title"))
        await pilot.press("right")
        await wait_for(pilot, lambda: "step 35 =" in text_of(chart.query_one("#title")), "the cursor moved")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen) and app.screen.step == 35,
                       "the detail of the step under the cursor")

        for back_to in (ChartScreen, StepDetailScreen, StepsScreen, DashboardScreen):
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, back_to), back_to.__name__)


async def test_step_text_shows_its_printed_sample_as_a_card(tmp_path):
    app = open_app(copy_run(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == str(LAST_STEP), "the whole run read")
        await open_steps(pilot, app)
        await go_to_step(pilot, app, 30)  # a validation step: the reward manager printed one sample
        await open_detail(pilot, app, 30)
        await pilot.press("l")
        log = app.screen.query_one(StepLog)
        await wait_for(pilot, lambda: log.query(SampleCard), "the printed sample's card")
        card = text_of(log.query_one(SampleCard))
        assert "Janet’s ducks lay 16 eggs" in card and "ground truth" in card and "score 1" in card
        assert "[prompt]" not in card  # the card is read, not raw
        assert "step:30 - global_seqlen" in screen_text(app)  # the raw text below it, to the step line


MARKUP_LOG = (
    "step:1 - critic/score/mean:0.25 - actor/pg_loss:0.1\n"
    "\x1b[31mwarning: [bold]not bold[/bold] and [link=x]not a link[/link]\x1b[0m\n"
    "[prompt] what is [red]2+2[/red]?\n"
    "[response] [link=http://x]4[/link]\n"
    "[ground_truth] 4\n"
    "[score] 1.0\n"
    "step:2 - critic/score/mean:0.5 - actor/pg_loss:0.2\n"
    "step:3 - critic/score/mean:0.75 - actor/pg_loss:0.3\n"
)


async def test_markup_in_the_step_text_shows_literally(tmp_path):
    log = tmp_path / "grpo.log"
    log.write_text(MARKUP_LOG)
    app = open_app(log)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "3", "step 3")
        await open_steps(pilot, app)
        await go_to_step(pilot, app, 2)
        await open_detail(pilot, app, 2)
        await pilot.press("l")
        step_log = app.screen.query_one(StepLog)
        await wait_for(pilot, lambda: step_log.query(SampleCard), "the sample card")
        text = screen_text(app)
        assert "warning: [bold]not bold[/bold] and [link=x]not a link[/link]" in text
        assert "\x1b" not in text and "[31m" not in text  # ANSI removed
        card = text_of(step_log.query_one(SampleCard))
        assert "what is [red]2+2[/red]?" in card and "[link=http://x]4[/link]" in card
        for widget in step_log.query("Static"):
            for strip in widget.render_lines(Region(0, 0, *widget.outer_size)):
                assert all(segment.style is None or not segment.style.link for segment in strip)


async def test_walk_through_a_step_with_rollout_and_validation_dumps(tmp_path):
    log = first_steps(tmp_path, 4)
    write_dumps(tmp_path, 2)
    app = dashboard_on(LocalFile(log, poll_seconds=0.05), run_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        card = await worst_sample_of_step_2(pilot, app)
        assert "answer 0" in card and "ground truth" in card and "acc false" in card

        await pilot.press("m")
        await highlight_metric(pilot, app, "critic/score/mean")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the reward chart")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen), "the detail again")
        await pilot.press("escape", "escape", "escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the dashboard")


async def test_steps_follow_new_steps_and_filter_by_rule(tmp_path):
    log = first_steps(tmp_path, 11)
    app = open_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 11, "11 steps")
        await open_steps(pilot, app)
        with log.open("ab") as out:
            out.write(step_line(12) + step_line(13))
        await wait_for(pilot, lambda: table(app).cursor_step == 13, "the cursor following step 13")

        await go_to_step(pilot, app, 5)
        with log.open("ab") as out:
            out.write(step_line(14) + step_line(15))
        await wait_for(pilot, lambda: table(app).row_count == 15, "two more rows")
        assert table(app).cursor_step == 5  # away from the top, the cursor stays on its step

        # KL rises above 0.03 from step 11; clipfrac is judged after a 5-step warm-up.
        await wait_for(pilot, lambda: any(f.rule == "kl-high" for f in app.findings), "the kl-high finding")
        kl_high = next(f for f in app.findings if f.rule == "kl-high")
        await pilot.press("slash", *"kl-high", "enter")
        await wait_for(pilot, lambda: table(app).row_count == len(kl_high.steps), "the filtered rows")
        shown = [table(app).step_at(row) for row in range(table(app).row_count)]
        assert shown == sorted(kl_high.steps, reverse=True) == [15, 14, 13, 12, 11]
        assert "filter kl-high" in text_of(app.screen.query_one("#title"))
        await pilot.press("slash", "ctrl+u", *"ok", "enter")
        await wait_for(pilot, lambda: table(app).row_count == 5, "the steps that broke no rule")
        assert table(app).step_at(0) == 5 and "✓ ok" in text_of(table(app))
        await pilot.press("slash", "ctrl+u", "enter")  # an empty filter shows every step again
        await wait_for(pilot, lambda: table(app).row_count == 15, "every row again")


async def test_a_filtered_list_keeps_its_cursor_on_the_step_its_title_names(tmp_path):
    """Filtered, the top row is no place to follow from: new matching steps arrive above the
    cursor, which stays on its step, and enter opens the step the title names."""
    log = first_steps(tmp_path, 15)
    app = open_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: any(f.rule == "kl-high" for f in app.findings), "kl-high")
        await open_steps(pilot, app)
        await pilot.press("slash", *"rule:kl-high", "enter")
        await wait_for(pilot, lambda: table(app).cursor_step == 15, "the newest kl-high step")
        assert "on step 15" in text_of(app.screen.query_one("#title"))
        with log.open("ab") as out:
            out.write(step_line(16) + step_line(17))
        await wait_for(pilot, lambda: table(app).step_at(0) == 17, "the new kl-high steps")
        assert table(app).cursor_step == 15 and "on step 15" in text_of(app.screen.query_one("#title"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen), "the step")
        assert app.screen.step == 15


async def test_help_lists_the_keys_of_the_current_screen(tmp_path):
    log = first_steps(tmp_path, 3)
    app = open_app(log)
    async with app.run_test(size=(100, 36)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 3, "3 steps")
        await open_steps(pilot, app)
        await open_detail(pilot, app, 3)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        keys = text_of(app.screen.query_one("#keys"))
        assert re.search(r"^\[\s+the previous step", keys, re.M)
        assert "the highlighted metric over the whole run" in keys and "quit rlwatch" in keys
        guide = text_of(app.screen.query_one("#guide"))  # how to read this screen, not the panels
        assert "[ and ] move it" in guide and "sparkline" not in guide
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen), "the detail again")


async def test_one_help_screen_is_kept_and_shows_each_screen_its_own_keys(tmp_path):
    log = first_steps(tmp_path, 3)
    app = open_app(log)
    async with app.run_test(size=(100, 36)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 3, "3 steps")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the dashboard's help")
        kept = app.screen
        assert "sparkline" in text_of(kept.query_one("#guide"))
        await pilot.press("escape")
        await open_steps(pilot, app)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the steps' help")
        assert app.screen is kept  # shown again, not composed anew
        keys = text_of(kept.query_one("#keys"))
        assert "ask for a step number and jump there" in keys and "focus the panel" not in keys
        guide = text_of(kept.query_one("#guide"))
        assert "newest on top" in guide and "sparkline" not in guide


async def test_command_palette_opens_a_metric_chart_and_screens(tmp_path):
    log = first_steps(tmp_path, 3)
    app = open_app(log)
    async with app.run_test(size=(100, 36)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 3, "3 steps")
        await pilot.press("ctrl+p", *"pg_loss")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the chart from the palette")
        assert app.screen.key == "actor/pg_loss"
        await pilot.press("ctrl+p", *"steps")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, StepsScreen), "the steps from the palette")
        await pilot.press("ctrl+p", *"2")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen) and app.screen.step == 2,
                       "a step by its number")
        await pilot.press("ctrl+p", *"dashboard")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the dashboard from any depth")
        assert len(app.screen_stack) == 2


def synthetic_steps(count: int) -> list[StepRecord]:
    """``count`` steps with the dashboard's metrics, 100 bytes of log apart."""
    return [StepRecord(step, {"critic/score/mean": step % 7 / 7, "actor/pg_loss": 0.01 * (step % 5),
                              "actor/kl_loss": 0.001, "actor/entropy": 0.5, "timing_s/step": 60.0,
                              "timing_s/gen": 40.0},
                       offset=step * 100, end=step * 100 + 99)
            for step in range(1, count + 1)]


async def test_a_100k_step_run_opens_as_fast_as_a_small_one(tmp_path):
    log = tmp_path / "empty.log"
    log.write_bytes(b"")
    app = dashboard_on(LocalFile(log, poll_seconds=0.05), rules=[])
    async with app.run_test(size=(120, 36)) as pilot:
        app.model.apply(synthetic_steps(100_000), now=time.time())
        started = time.monotonic()
        await open_steps(pilot, app)
        await wait_for(pilot, lambda: "100000" in text_of(table(app)), "the newest row drawn", timeout=2)
        await go_to_step(pilot, app, 50_000)
        await pilot.press("end")
        await wait_for(pilot, lambda: table(app).cursor_step == 1, "the oldest step")
        await pilot.press("home")
        await wait_for(pilot, lambda: table(app).cursor_step == 100_000, "the newest step")
        assert time.monotonic() - started < 3.0

        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen), "the detail", timeout=2)
        await highlight_metric(pilot, app, "actor/pg_loss")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the chart", timeout=2)
        await pilot.press("left")
        await wait_for(pilot, lambda: "step 99999 =" in text_of(app.screen.query_one("#title")),
                       "the cursor moved", timeout=2)


async def test_a_run_logging_only_to_the_file_logger_lists_and_opens_its_steps(tmp_path):
    from tests.corpus import REPO

    jsonl = tmp_path / "proj" / "exp.jsonl"
    jsonl.parent.mkdir()
    jsonl.write_bytes((REPO / "tests/fixtures/jsonl/v0.7.1_orjson.jsonl").read_bytes())
    log = tmp_path / "train.log"  # trainer.logger=['file']: the console prints no step line
    log.write_bytes(f"Creating file logger at {jsonl}\n".encode())
    app = open_app(log)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 5, "the JSONL's five steps")
        await open_steps(pilot, app)
        await wait_for(pilot, lambda: table(app).row_count == 5, "five rows")
        assert [table(app).step_at(row) for row in range(5)] == [4, 3, 2, 1, 0]
        await go_to_step(pilot, app, 2)
        detail = await open_detail(pilot, app, 2)
        assert metric_cells(app, "actor/entropy")[1] == format_exact(
            app.model.series["actor/entropy"].value_at(2))
        await pilot.press("l")
        await wait_for(pilot, lambda: "came from the file logger (JSONL)" in screen_text(app),
                       "the log tab's note")
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: detail.step == 1, "the step before, from the JSONL too")


async def test_screens_opened_again_are_the_same_screens_still_whole(tmp_path):
    """s, enter, c and f keep their screens between visits (nothing composed again), and a
    kept screen left with esc keeps its widgets: the second enter shows the step asked for."""
    app = open_app(first_steps(tmp_path, 30))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "30", "the run read")
        seen: dict[type, object] = {}
        for visit in range(2):
            await open_steps(pilot, app)
            steps = app.screen
            await go_to_step(pilot, app, 20 + visit)
            detail = await open_detail(pilot, app, 20 + visit)
            metrics = detail.query_one(StepMetrics)
            await wait_for(pilot, lambda: metrics.highlighted_key is not None, "the step's metrics")
            await pilot.press("c")
            await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the chart")
            chart = app.screen
            assert f"step {20 + visit} =" in text_of(chart.query_one("#title"))
            for screen in (steps, detail, chart):
                assert seen.setdefault(type(screen), screen) is screen
            for back_to in (StepDetailScreen, StepsScreen, DashboardScreen):
                await pilot.press("escape")
                await wait_for(pilot, lambda: isinstance(app.screen, back_to), back_to.__name__)


async def test_the_first_cursor_move_on_a_new_chart_builds_no_figure(tmp_path):
    """``c`` builds the figure for the width the chart gets (before its first layout it
    had none, and the first ← built the figure again, a quarter of a second on 100k steps)."""
    app = open_app(first_steps(tmp_path, 30))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "30", "the run read")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the chart")
        plot = app.screen.query_one(ChartPlot)
        await wait_for(pilot, lambda: plot.cursor_cell() is not None, "the figure drawn")
        builds = count_figure_builds(plot)
        await pilot.press("left")
        await wait_for(pilot, lambda: "step 29 =" in text_of(app.screen.query_one("#title")),
                       "the cursor on the step before")
        await pilot.pause()
        assert builds() == 0



async def test_the_screens_keys_open_are_composed_ahead_and_show_what_is_asked(tmp_path):
    """Once the run is drawn and judged, the screens of ?, s, f, enter and c are composed off
    screen (their first key only shows them); each then shows what its key asks for, not
    what it was composed with (the newest step, the focused panel's metric)."""
    app = open_app(first_steps(tmp_path, 30))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "30", "the run read")
        kinds = (HelpScreen, StepsScreen, FindingsScreen, StepDetailScreen, ChartScreen)
        await wait_for(pilot, lambda: all(kind in app._kept_screens and app._kept_screens[kind].is_mounted
                                          for kind in kinds), "the screens composed")
        ahead = dict(app._kept_screens)
        assert app.screen is app.dashboard  # none of them shown
        assert not any(screen in app.screen_stack for screen in ahead.values())

        await open_steps(pilot, app)
        assert app.screen is ahead[StepsScreen] and table(app).cursor_step == 30
        await go_to_step(pilot, app, 12)
        detail = await open_detail(pilot, app, 12)
        assert detail is ahead[StepDetailScreen] and "step 12 of" in text_of(detail.query_one("#title"))
        assert metric_cells(app, "actor/pg_loss")[1] == format_exact(metric(step_line(12), "actor/pg_loss"))
        await highlight_metric(pilot, app, "actor/pg_loss")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the chart")
        assert app.screen is ahead[ChartScreen] and app.screen.key == "actor/pg_loss"
        assert "step 12 =" in text_of(app.screen.query_one("#title"))


async def composing_ahead(app: RlwatchApp, kind: type) -> None:
    """Return as soon as a screen of ``kind`` is being composed ahead (made, not yet mounted),
    one turn of the event loop at a time so that the moment is not missed."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        screen = app._kept_screens.get(kind)
        if screen is not None and not screen.is_mounted:
            return
        assert screen is None, "composed before it was seen composing"
        await asyncio.sleep(0)
    raise AssertionError(f"no {kind.__name__} composed ahead within 10 s")


async def test_quitting_while_a_screen_is_composed_ahead_ends_cleanly(tmp_path):
    """The app closing mid-compose (``q`` at that moment, or a test ending) ended in Textual's
    'No Tab with id --content-tab-metrics' when the step detail was composing then, or was
    the next to compose (the findings screen composing: the shutdown let it finish, and
    composing ahead went on to the step detail)."""
    for kind in (StepsScreen, FindingsScreen, StepDetailScreen, ChartScreen):
        app = open_app(first_steps(tmp_path, 30))
        async with app.run_test(size=(120, 36)):
            # Watched from the start, one turn at a time: a pilot's pause can outlast a compose.
            await composing_ahead(app, kind)
        assert app.return_code in (0, None), kind  # run_test raises what the app raised



async def test_q_while_a_screen_is_composed_ahead_quits_cleanly(tmp_path):
    """``q`` pressed just as a screen starts composing ahead: Textual mounts nothing once the
    app is told to exit, so the step detail composed then had no widgets when it went to show
    its step ('No Tab with id --content-tab-metrics', ``NoMatches`` on ``#rules``); quitting
    now lets that screen finish first."""
    for kind in (StepsScreen, FindingsScreen, StepDetailScreen, ChartScreen):
        app = open_app(first_steps(tmp_path, 30))
        async with app.run_test(size=(120, 36)):
            await composing_ahead(app, kind)
            await app.run_action("quit")  # what q does, at once (a pilot's press waits a frame)
        assert app.return_code in (0, None), kind
