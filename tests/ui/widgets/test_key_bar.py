"""The key bar: the current screen's keys on the bottom row, repainted (not rebuilt) as
screens come and go, and clickable."""

from __future__ import annotations

from tests.support import dashboard_on, text_of
from tui.sources.local_file import LocalFile
from tui.ui.app import RlwatchApp
from tui.ui.screens.steps import StepsScreen
from tui.ui.widgets.key_bar import KeyBar


def app_on(tmp_path) -> RlwatchApp:
    log = tmp_path / "grpo.log"
    log.write_bytes(b"step:1 - critic/score/mean:0.5 - actor/pg_loss:0.1\n")
    return dashboard_on(LocalFile(log))


def bar_text(app: RlwatchApp) -> str:
    return text_of(app.screen.query_one(KeyBar))


async def test_the_dashboard_bar_lists_its_keys_and_the_palette_at_the_right(tmp_path):
    app = app_on(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        text = bar_text(app)
        for item in ("c Chart", "q Quit", "? Help", "s Steps", "f Findings", "r Report", "p Procs"):
            assert item in text
        assert text.rstrip().endswith("^p find")
        assert len(text) == 100


async def test_each_screen_shows_its_own_keys_and_the_dashboard_gets_its_back(tmp_path):
    app = app_on(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        bar = app.screen.query_one(KeyBar)
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, StepsScreen)
        assert "g Go to step" in bar_text(app) and "c Chart" not in bar_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert "c Chart" in bar_text(app)
        assert app.screen.query_one(KeyBar) is bar and not bar.children  # repainted, not rebuilt


async def test_clicking_a_key_presses_it(tmp_path):
    app = app_on(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        column = bar_text(app).index("s Steps")
        await pilot.click(KeyBar, offset=(column + 1, 0))
        await pilot.pause()
        assert isinstance(app.screen, StepsScreen)


async def test_an_80_column_screen_keeps_quit_and_help_in_view(tmp_path):
    app = app_on(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = bar_text(app)
        assert "q Quit" in text and "? Help" in text and len(text) == 80


async def test_at_80_columns_keys_are_dropped_whole_and_help_stays(tmp_path):
    """The step detail's bar ended in ``d Dum``: an item is shown whole or not at all, and
    ``?`` (which lists every key) is always there."""
    app = app_on(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause(0.3)
        text = bar_text(app)
        assert "? Help" in text and "d Dumps" in text and "[ Prev" in text
        shown = {word for word in text.split()}
        assert not {"Dum", "Repor", "F"} & shown
