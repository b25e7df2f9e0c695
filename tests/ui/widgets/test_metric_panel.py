"""What a dashboard panel draws at each size, on real logs through the real app.

A panel with room for a chart (200×50) draws its history as a line with a
value axis and a step axis; a few rows high (120×40, 80×24), a sparkline. A
validation panel of a run scored on several data sets (corpus 034: MATH and
GSM8K) draws a line per set and names each with its latest score.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.color import Color
from textual.widgets import Sparkline

from tests.corpus import verl_log
from tests.support import first_steps, panel, text_of
from tests.ui.test_dashboard import open_app, wait_for
from tui.ui.format import format_number
from tui.ui.widgets.line_chart import LineChart
from tui.ui.widgets.metric_panel import source_names

MATH_AND_GSM8K = verl_log("034")


async def test_a_panel_with_room_draws_a_line_chart_with_its_axes_a_small_one_a_sparkline(tmp_path: Path):
    app = open_app(first_steps(tmp_path, 20))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 20, "20 steps")
        reward = panel(app, "reward")
        await wait_for(pilot, lambda: "┤" in text_of(reward.query_one(LineChart)), "the chart")
        assert reward.charted and not reward.query_one(Sparkline).display
        chart = text_of(reward.query_one(LineChart)).splitlines()
        low, high = reward.series.finite_range()
        # The value axis spans the run's min and max; the step axis its first and last step.
        assert chart[0].strip().startswith(f"{format_number(high)}┤")
        assert chart[-2].strip().startswith(f"{format_number(low)}┤")
        assert chart[-1].strip().startswith("└1─") and chart[-1].strip().endswith("─20")
        # Every panel shown has the same room: all of them are charts.
        assert all(shown.charted for shown in app.dashboard.grid.shown_panels())
        for size in ((120, 40), (80, 24)):
            await pilot.resize_terminal(*size)
            await wait_for(pilot, lambda: not reward.charted, f"a sparkline at {size}")
            await wait_for(pilot, lambda: reward.query_one(Sparkline).data, f"its data at {size}")
            assert reward.query_one(Sparkline).display and not reward.query_one(LineChart).display
        await pilot.resize_terminal(200, 50)
        await wait_for(pilot, lambda: reward.charted and "─20" in text_of(reward.query_one(LineChart)),
                       "the chart again")


async def test_validation_on_several_data_sets_draws_a_line_each_named_with_its_score(tmp_path: Path):
    log = tmp_path / "run.log"
    shutil.copy(MATH_AND_GSM8K, log)
    app = open_app(log)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 211, "the whole run", timeout=15)
        validation = panel(app, "val")
        await wait_for(pilot, lambda: len(validation.lines) == 2, "a line per data set")
        math_key = "val-core/DigitalLearningGmbH/MATH-lighteval/reward/mean@1"
        gsm8k_key = "val-core/openai/gsm8k/reward/mean@1"
        # The panel's own key (the numbers line, the rules) first, each line named shortly.
        assert validation.key == math_key
        assert [name for name, _ in validation.lines] == ["MATH-lighteval", "gsm8k"]
        legend = text_of(validation.query_one("#legend"))
        for name, key in (("MATH-lighteval", math_key), ("gsm8k", gsm8k_key)):
            latest = format_number(app.model.series[key].last()[1])
            assert f"━ {name} {latest}" in legend
        chart = validation.query_one(LineChart)
        await wait_for(pilot, lambda: "┤" in text_of(chart), "the chart")
        colours = {colour for row in chart.rows for text, colour in row if text.strip()}
        assert {0, 1} <= colours  # two lines…
        drawn = {segment.style.color for y in range(chart.size.height) for segment in chart.render_line(y)
                 if segment.text.strip() and "┤" not in segment.text and "│" not in segment.text
                 and "└" not in segment.text}
        assert len(drawn) == 2  # …in two colours of the theme
        # The value axis spans both sets: GSM8K's best score is its top.
        high = max(app.model.series[gsm8k_key].finite_range()[1],
                   app.model.series[math_key].finite_range()[1])
        assert text_of(chart).splitlines()[0].strip().startswith(f"{format_number(high)}┤")
        # With a row to spare (120×40) the legend stays above the sparkline, without line marks.
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: not validation.charted, "a sparkline")
        await wait_for(pilot, lambda: text_of(validation.query_one("#legend")).startswith("MATH-lighteval"),
                       "the legend without line marks")
        assert validation.query_one("#legend").display and validation.query_one(Sparkline).display


async def test_one_data_set_keeps_the_panel_as_it_was(tmp_path: Path):
    """The demo's run (corpus 032) scores GSM8K alone: no legend row, one line."""
    app = open_app(first_steps(tmp_path, 20))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 20, "20 steps")
        validation = panel(app, "val")
        await wait_for(pilot, lambda: validation.lines, "the validation line")
        assert len(validation.lines) == 1 and not validation.query_one("#legend").display


def test_a_data_set_is_named_by_its_last_part_unless_two_share_it():
    assert source_names(["openai/gsm8k", "DigitalLearningGmbH/MATH-lighteval"]) == {
        "openai/gsm8k": "gsm8k", "DigitalLearningGmbH/MATH-lighteval": "MATH-lighteval"}
    assert source_names(["a/test", "b/test", "aime"]) == {"a/test": "a/test", "b/test": "b/test",
                                                          "aime": "aime"}


async def test_a_kept_chart_takes_a_new_theme_and_focus_moves_only_the_title(tmp_path: Path):
    """The chart keeps its rows between repaints: a theme change must still recolour them. Focus
    shows in the title (reversed) alone: a focus background would repaint every row of two
    panels a frame after the arrow key."""
    app = open_app(first_steps(tmp_path, 20))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 20, "20 steps")
        reward = panel(app, "reward")
        chart = reward.query_one(LineChart)
        await wait_for(pilot, lambda: "┤" in text_of(chart), "the chart")

        def line_colours() -> set[str]:
            return {segment.style.color.triplet.hex for y in range(chart.size.height - 1)
                    for segment in chart.render_line(y)
                    if segment.text.strip() and not {"┤", "│"} & set(segment.text)}

        def backgrounds() -> set:
            return {segment.style.bgcolor for y in range(chart.size.height)
                    for segment in chart.render_line(y)}

        assert line_colours() == {Color.parse(app.theme_variables["primary"]).hex.lower()}
        dark = backgrounds()
        app.theme = "textual-light"
        await pilot.pause(0.3)
        assert line_colours() == {Color.parse(app.theme_variables["primary"]).hex.lower()}
        focused = backgrounds()
        assert focused == {reward.rich_style.bgcolor} != dark
        assert app.focused is reward and reward.styles.border_title_style.reverse
        await pilot.press("right")
        await wait_for(pilot, lambda: app.focused is not reward, "the next panel focused")
        await pilot.pause(0.2)
        assert backgrounds() == focused
        assert not reward.styles.border_title_style.reverse
