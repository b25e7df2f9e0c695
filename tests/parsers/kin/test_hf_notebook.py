"""The HF Trainer's notebook output pasted from Jupyter/Colab: its progress line and its table,
one row per logged step (Unsloth's GRPO notebooks)."""

import pytest

from tests.corpus import REPO
from tests.parsers.kin.helpers import bars, model, steps
from tui.rules.run_state import RunState, run_state

# unsloth 2291: the table as GitHub rendered a copy of it (`` | `` cells, a ``-- | --`` row),
# its last row cut by the paste inside the kl cell.
PASTED = (REPO / "tests/fixtures/logs/wild/unsloth2291_grpo_notebook_table_pipes_dash_row_cut.log").read_text()
ROWS = PASTED.splitlines()


def _as_tabs(lines: list[str]) -> str:
    """The same table as a copy of the rendered HTML gives it: cells between TABs, no rule."""
    return "".join(line.replace(" | ", "\t") + "\n" for line in lines if not line.startswith("--"))


def _as_markdown(lines: list[str]) -> str:
    """The same table written as Markdown: pipes at both ends, a ``|------|:---:|`` rule."""
    out = []
    for line in lines:
        cells = line.split(" | ")
        if line.startswith("--"):
            cells = ["------"] + [":---:"] * (len(cells) - 1)
        out.append("| " + " | ".join(cell.ljust(8) for cell in cells) + " |\n")
    return "".join(out)


@pytest.mark.parametrize("table", [PASTED, _as_tabs(ROWS), _as_markdown(ROWS)],
                         ids=["github-pipes", "tabs", "markdown"])
def test_each_row_is_a_step_with_the_metrics_the_header_names(table):
    got = steps(table)
    assert list(got) == list(range(1, 13))
    # "Training Loss" is the logs' loss; Unsloth's " / " is the key's "/".
    assert got[9] == {"loss": 0.0001, "reward": -3.0, "reward_std": 1.732051, "completion_length": 318.5,
                      "kl": 0.001667, "rewards/match_format_exactly": 0.0,
                      "rewards/match_format_approximately": -0.5,
                      "rewards/check_grounding_references_from_response": -2.5}


def test_a_row_cut_short_loses_its_last_cell_only():
    got = steps(PASTED)
    assert got[12] == {"loss": 0.0001, "reward": -15.25, "reward_std": 1.892969, "completion_length": 319.0}


def test_no_log_is_a_metric_not_logged_at_that_step():
    table = ("Step\tTraining Loss\treward\tsampling / importance_sampling_ratio / max\tkl\n"
             "1\t0.000000\t0.500000\t0\t0.000000\n"
             "2\t-0.000000\t0.250000\tNo Log\t0.000010\n")
    assert steps(table) == {1: {"loss": 0.0, "reward": 0.5, "sampling/importance_sampling_ratio/max": 0.0,
                                "kl": 0.0},
                            2: {"loss": -0.0, "reward": 0.25, "kl": 0.00001}}


def test_the_table_ends_at_the_first_line_that_is_no_row():
    table = _as_tabs(ROWS[:4]) + "\nUnsloth: Will smartly offload gradients to save VRAM!\n3\t0.5\t0.5\n"
    assert list(steps(table)) == [1, 2]


@pytest.mark.parametrize(("line", "position"), [
    (" [ 50/250 12:34 < 50:00, 0.07 it/s, Epoch 0.20/1]", (50, 250, 754.0, 3000.0)),
    (" [  1/250 : < :, Epoch 0/1]", (1, 250, None, None)),
    ("[120/120 05:58, Epoch 17/18]", (120, 120, 358.0, 0.0)),
])
def test_the_progress_line_is_the_runs_position(line, position):
    bar = bars(line + "\n")[0]
    assert (bar.n, bar.total, bar.elapsed_s, bar.eta_s) == position and bar.training


def test_an_evaluation_bar_has_no_epoch_and_is_no_position():
    assert bars(" [ 8/16 00:02 < 00:02]\n") == []


def test_a_table_whose_last_row_reaches_the_progress_total_is_finished():
    run = model(" [3/3 01:02, Epoch 1/1]\n" + _as_tabs(ROWS[:5]))
    assert (run.last_step, run.total_steps) == (3, 3)
    assert run_state(run, []) is RunState.FINISHED


def test_a_header_in_prose_opens_no_table():
    assert steps("Watch the Training Loss column: it should fall.\n1 | 0.5 | 0.5\n") == {}
