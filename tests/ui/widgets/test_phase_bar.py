"""The phase bar keeps its height in step with its legend: moving to a step whose legend
wraps to more (or fewer) lines lays the screen out again; one that wraps the same does not."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from tui.ui.widgets.phase_bar import PhaseBar

TWO = {"timing_s/step": 10.0, "timing_s/gen": 6.0, "timing_s/update_actor": 4.0}
MANY = {"timing_s/step": 80.0, **{f"timing_s/phase_number_{i}": 10.0 - i for i in range(8)}}


class BarAbove(App[None]):
    def compose(self) -> ComposeResult:
        yield PhaseBar()
        yield Static("below", id="below")


async def test_the_bar_grows_and_shrinks_with_its_legend_and_what_follows_moves():
    app = BarAbove()
    async with app.run_test(size=(60, 20)) as pilot:
        bar, below = app.query_one(PhaseBar), app.query_one("#below")
        bar.show(TWO)
        await pilot.pause()
        assert bar.size.height == 2 and below.region.y == 2
        bar.show(MANY)
        await pilot.pause()
        assert bar.size.height > 3 and below.region.y == bar.size.height
        bar.show(TWO)
        await pilot.pause()
        assert bar.size.height == 2 and below.region.y == 2


async def test_a_step_whose_legend_wraps_the_same_is_only_repainted():
    app = BarAbove()
    async with app.run_test(size=(60, 20)) as pilot:
        bar = app.query_one(PhaseBar)
        bar.show(TWO)
        await pilot.pause()
        layouts: list[bool] = []
        refresh = bar.refresh

        def noted(*regions, **flags):
            layouts.append(flags.get("layout", False))
            return refresh(*regions, **flags)

        bar.refresh = noted
        bar.show({**TWO, "timing_s/gen": 6.5})
        await pilot.pause()
        assert layouts == [False]
        assert "6.5s" in bar.render_line(1).text
        bar.show(MANY)
        assert layouts == [False, False, True]
