"""The rules block of the step detail: its text changes in place, it grows for a taller text
and keeps its height for a shorter one, so what is under it stays where it was."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Static

from tests.support import text_of
from tui.ui.widgets.steady_text import SteadyText


class Stacked(App[None]):
    def compose(self) -> ComposeResult:
        yield SteadyText(id="rules")
        yield Static("under", id="under")


def lines(count: int) -> Content:
    return Content("\n".join(f"rule {number}" for number in range(1, count + 1)))


async def test_a_shorter_text_keeps_the_height_and_a_taller_one_grows_it():
    app = Stacked()
    async with app.run_test(size=(40, 20)) as pilot:
        block, under = app.query_one(SteadyText), app.query_one("#under")
        block.update(lines(3))
        await pilot.pause()
        assert block.size.height == 3 and under.region.y == 3

        block.update(lines(1))
        await pilot.pause()
        assert text_of(block).split() == ["rule", "1"]  # the new text, the rest blank
        assert block.size.height == 3 and under.region.y == 3  # nothing under it moved

        block.update(lines(5))
        await pilot.pause()
        assert block.size.height == 5 and under.region.y == 5
        assert "rule 5" in text_of(block)


async def test_a_wrapped_line_counts_as_the_rows_it_takes():
    app = Stacked()
    async with app.run_test(size=(20, 20)) as pilot:
        block = app.query_one(SteadyText)
        block.update(Content("a line much longer than twenty columns"))
        await pilot.pause()
        assert block.size.height == 2
