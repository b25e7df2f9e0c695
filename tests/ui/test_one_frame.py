"""A key is drawn in one frame: the panel arrows, the step detail's tab keys and ``[``/``]``.

Each frame the app draws costs a render and a write (a screen of 160×48 is
48 kB) and, at a real terminal, 20–30 ms: a key whose effects came in turns
(Textual's focus events, the tab underline, a scroll bar fitted after the
layout, the step's text read by a worker) was drawn two or three times. The
app here is the real one, counting the frames it hands to the terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import RenderableType
from textual.screen import Screen
from textual.widgets import TabbedContent, Tabs
from textual.widgets._tabs import Underline

from tests.support import dashboard_on, first_steps, panel, text_of, wait_for
from tui.sources.local_file import LocalFile
from tui.ui.app import RlwatchApp
from tui.ui.screens.step_detail import StepDetailScreen
from tui.ui.widgets.step_log import StepLog
from tui.ui.widgets.step_metrics import StepMetrics

SIZE = (160, 48)
# Long enough for every frame a key brings (a second frame came 20-30 ms after the first).
AFTER_KEY_S = 0.25


class FrameCountingApp(RlwatchApp):
    """The real app, counting the frames it draws (the pilot's terminal writes none) and
    noting, at each, what ``look`` sees."""

    frames = 0
    look: Callable[[], object] = staticmethod(lambda: None)
    seen: list[object] = []

    def _display(self, screen: Screen, renderable: RenderableType | None) -> None:
        if renderable is not None and not self._batch_count:
            self.frames += 1
            self.seen.append(self.look())
        super()._display(screen, renderable)


async def frames_for(pilot, app: FrameCountingApp, key: str) -> int:
    """How many frames ``key`` drew."""
    await pilot.pause(AFTER_KEY_S)  # whatever came before has been drawn
    app.frames, app.seen = 0, []
    await pilot.press(key)
    await pilot.pause(AFTER_KEY_S)
    return app.frames


def counting_app(tmp_path: Path) -> FrameCountingApp:
    app = dashboard_on(LocalFile(first_steps(tmp_path, 20), poll_seconds=0.05), app=FrameCountingApp,
                       watch_accelerators=False)
    assert isinstance(app, FrameCountingApp)
    return app


async def open_step_detail(pilot, app: FrameCountingApp) -> None:
    """The detail of the run's newest step, opened from the steps table."""
    await wait_for(pilot, lambda: app.model.step_count == 20, "20 steps")
    await pilot.press("s")
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen), "the step detail")


async def test_a_panel_arrow_moves_the_focus_in_one_frame(tmp_path: Path):
    app = counting_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 20, "20 steps")
        # The header's once-a-second redraw is not the key's frame.
        clock = app.dashboard.header._clock_timer
        assert clock is not None
        clock.pause()
        reward, validation = panel(app, "reward"), panel(app, "val")
        assert app.focused is reward
        assert await frames_for(pilot, app, "right") == 1
        assert app.focused is validation and validation.styles.border_title_style.reverse
        assert not reward.styles.border_title_style.reverse
        assert await frames_for(pilot, app, "left") == 1
        assert app.focused is reward


async def test_the_step_details_tab_keys_draw_the_tab_whole_in_their_first_frame(tmp_path: Path):
    """``l``: the tab, its underline, the focus and the step's text (read from a local log in
    time) in the key's first frame; ``m`` the same, back. (Textual may lay the screen out
    once more a moment later, drawing the same again.)"""
    app = counting_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_step_detail(pilot, app)
        screen = app.screen
        tabs = screen.query_one(Tabs)
        underline = tabs.query_one(Underline)
        log, metrics = screen.query_one(StepLog), screen.query_one(StepMetrics)

        def under(tab_id: str) -> bool:
            tab = screen.query_one(TabbedContent).get_tab(tab_id)
            return ((underline.highlight_start, underline.highlight_end)
                    == tab.region.shrink(tab.styles.gutter).column_span)

        app.look = lambda: (under("log"), app.focused is log, log.display,
                            [block.size.height for block in log.query(".text")])
        assert await frames_for(pilot, app, "l") >= 1
        underlined, focused, shown, text = app.seen[0]
        assert underlined and focused and shown and text and all(text)
        assert "step:20 " in text_of(log.query_one(".text"))

        app.look = lambda: (under("metrics"), app.focused is metrics, metrics.display)
        assert await frames_for(pilot, app, "m") >= 1
        assert app.seen[0] == (True, True, True)


async def test_brackets_draw_one_frame_each(tmp_path: Path):
    """``[``/``]`` onto steps with more or fewer metrics: the table's scroll bar is fitted in
    the same frame (it was repainted in one of its own after the layout)."""
    app = counting_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_step_detail(pilot, app)
        metrics = app.screen.query_one(StepMetrics)
        lengths = set()
        for key in ("left_square_bracket", "right_square_bracket") * 2:
            assert await frames_for(pilot, app, key) == 1
            lengths.add(metrics.virtual_size.height)
            assert metrics.vertical_scrollbar.window_virtual_size == metrics.virtual_size.height
        assert len(lengths) == 2  # steps 19 and 20 log different numbers of metrics


async def test_back_on_the_dashboard_the_header_clock_waits_a_second(tmp_path: Path):
    """``esc`` draws the dashboard whole, the time since the last step with it; the header's
    once-a-second tick starts over from there. On its old beat it came anywhere in the next
    second, most often a few milliseconds after the screen (the keys on another screen take
    a while), one more frame for the ``esc``. The clock still ticks after that second."""
    app = counting_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.step_count == 20, "20 steps")
        await pilot.press("s")
        await pilot.pause(0.7)
        app.frames = 0
        await pilot.press("escape")
        await pilot.pause(0.8)
        assert app.screen is app.dashboard and app.frames == 1
        await pilot.pause(0.4)
        assert app.frames == 2
