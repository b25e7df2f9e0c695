"""Runs' names cut to what tells them apart: a real sweep's three runs stay three names."""

from __future__ import annotations

from tui.ui.fleet_rows import fleet_line, fleet_row
from tui.ui.telling_names import telling_names

# A real sweep's runs (learning rate × KL coefficient), as a glob over their parent names them.
SWEEP = ["sw/grpo_qwen2.5-7b_gsm8k_lr1e-6_kl0.001", "sw/grpo_qwen2.5-7b_gsm8k_lr1e-6_kl0.01",
         "sw/grpo_qwen2.5-7b_gsm8k_lr3e-6_kl0.001"]


def test_the_shared_directory_goes_and_the_names_stay_whole_where_they_fit():
    assert telling_names(SWEEP, 40) == [name[3:] for name in SWEEP]


def test_where_they_do_not_fit_the_shared_start_folds_and_the_differing_tail_stays():
    assert telling_names(SWEEP, 16) == ["…lr1e-6_kl0.001", "…lr1e-6_kl0.01", "…lr3e-6_kl0.001"]
    assert telling_names(SWEEP) == telling_names(SWEEP, 16)  # no room given: the short form
    assert len(set(telling_names(SWEEP, 12))) == 3 and all(len(n) <= 12 for n in telling_names(SWEEP, 12))


def test_names_that_share_nothing_or_are_alone_are_left_as_they_are():
    assert telling_names(["gpg/fsdp", "ppo/gemma2"], 10) == ["gpg/fsdp", "ppo/gemma2"]
    assert telling_names(["runs/a/x", "runs/b/x"]) == ["a/x", "b/x"]
    assert telling_names(["sw/cola"]) == ["sw/cola"]


def test_the_status_line_names_the_worst_run_of_a_sweep_by_what_sets_it_apart():
    rows = [fleet_row(name, "h", None, [], None, "h: connection refused" if i == 2 else None, i == 2, 0.0)
            for i, name in enumerate(SWEEP)]
    assert fleet_line(rows).endswith("✖ …lr3e-6_kl0.001")


async def test_compares_legend_keeps_the_tails_that_tell_a_sweep_apart_at_80_columns():
    from textual.app import App, ComposeResult

    from tests.support import text_of
    from tui.ui.widgets.compare_legend import CompareLegend

    class OneLegend(App[None]):
        def compose(self) -> ComposeResult:
            yield CompareLegend()

    app = OneLegend()
    async with app.run_test(size=(80, 3)) as pilot:
        legend = app.query_one(CompareLegend)
        legend.show([(letter, "•", "bold", name) for letter, name in zip("ABC", SWEEP)])
        await pilot.pause()
        shown = text_of(legend)
    assert "A • …lr1e-6_kl0.001" in shown and "B • …lr1e-6_kl0.01" in shown and "C • …lr3e-6_kl0.001" in shown
