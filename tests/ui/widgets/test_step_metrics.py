"""The step detail's metrics table: a step's metrics by group, the cursor kept on its
metric from step to step, the run's medians filled in when worked out."""

from __future__ import annotations

import math
import statistics

from textual.app import App, ComposeResult

from bench.synthetic import fill_model
from tests.support import wait_for
from tui.model.run_model import RunModel
from tui.ui.format import format_exact
from tui.ui.widgets.step_metrics import PENDING, StepMetrics, run_median


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield StepMetrics()


def test_run_median_is_the_median_of_the_finite_values():
    from array import array

    values = array("d", [3.0, math.nan, 1.0, math.inf, 2.0, 10.0])
    assert run_median(values) == statistics.median([3.0, 1.0, 2.0, 10.0])
    assert run_median(array("d", [math.nan])) is None


async def test_the_cursor_stays_on_its_metric_and_medians_fill_in():
    model: RunModel = fill_model(50)
    app = OneTable()
    async with app.run_test(size=(100, 20)) as pilot:
        table = app.query_one(StepMetrics)
        table.focus()
        table.show_step(model, 10)
        assert table.rows[0].key is None and table.rows[0].cells[0].startswith("actor/")
        assert table.highlighted_key == "actor/entropy"  # the first metric, under its group
        await pilot.press("j", "j")
        key = table.highlighted_key
        cells = table.cells(key)
        series = model.series[key]
        assert cells[0].strip() == key and cells[1] == format_exact(series.value_at(10))

        table.show_step(model, 11)
        assert table.highlighted_key == key
        await wait_for(pilot, lambda: PENDING not in table.cells(key), "the run's median")
        assert table.cells(key)[3] != ""
        drawn = [table.render_line(y).text for y in range(table.size.height)]
        assert drawn[0].split()[:2] == ["metric", "value"]
        assert any(line.split()[:1] == [key] for line in drawn)

        await pilot.press("end")
        assert table.cursor == table.row_count - 1 and table.scroll_y > 0
