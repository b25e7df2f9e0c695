"""Where a run stands: the end a run's own progress bar shows."""

from __future__ import annotations

from tests.corpus import verl_log
from tests.parsers.kin.helpers import model
from tui.rules.run_state import RunState, run_state


def test_a_run_bar_that_counted_every_step_is_a_finished_run():
    # OpenRLHF (corpus 044): Episode bars at 12/12 and no metric lines to reach the total with.
    run = model(verl_log("044").read_text(encoding="utf-8"))
    assert run.last_step is None and (run.progress.done, run.progress.total) == (12, 12)
    assert run_state(run, []) == RunState.FINISHED


def test_a_run_bar_short_of_its_total_is_still_running():
    text = "Training Progress:  30%|███       | 3/10 [00:30<01:10, 10.00s/it]\n"
    assert run_state(model(text), []) == RunState.RUNNING


def test_an_evaluation_bar_at_its_end_says_nothing_about_the_run():
    text = ("step:3 - critic/score/mean:0.5\n"
            "Processed prompts: 100%|██████████| 16/16 [00:12<00:00,  1.25it/s]\n")
    assert run_state(model(text), []) == RunState.RUNNING
