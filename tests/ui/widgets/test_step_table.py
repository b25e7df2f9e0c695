"""The steps table is redrawn when what its rows show changes, not each time the rules
hand over the same verdicts in a new list (every few seconds)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from bench.synthetic import fill_model
from tui.rules.findings import Finding, Severity
from tui.ui.widgets.step_table import StepTable


def kl_high(*steps: int) -> Finding:
    finding = Finding("kl-high", Severity.WARNING, metric="actor/kl_loss")
    for step in steps:
        finding.add_hit(step, 0.05, "KL above 0.03")
    return finding


async def test_the_same_verdicts_in_a_new_list_draw_nothing_a_new_hit_redraws():
    model = fill_model(30)

    class OneTable(App[None]):
        def compose(self) -> ComposeResult:
            yield StepTable(model)

    app = OneTable()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(StepTable)
        table.sync([kl_high(28, 29)])
        await pilot.pause()
        redraws: list[tuple] = []
        refresh = table.refresh

        def noted(*regions, **flags):
            redraws.append(regions)
            return refresh(*regions, **flags)

        table.refresh = noted
        table.sync([kl_high(28, 29)])  # the next judgement: the same, in a new list
        assert redraws == []
        assert "kl-high +" not in table.render_line(1).text and "kl-high" in table.render_line(2).text
        table.sync([kl_high(28, 29, 30)])  # a new hit, on the newest step
        assert redraws
        assert "kl-high" in table.render_line(1).text
