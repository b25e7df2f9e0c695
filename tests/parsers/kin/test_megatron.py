"""Megatron-LM's ``iteration N/M | key: value |`` lines (Megatron-SWIFT's GRPO, DPO and SFT)."""

from tests.parsers.kin.helpers import model, steps, totals
from tui.rules.run_state import RunState, run_state

# ms-swift 8173's first line, shortened: Megatron-LM's items and ms-swift's own.
LINE = (" [2026-03-03 16:38:36] iteration        2/     624 | consumed samples:          256 | "
        "elapsed time per iteration (ms): 3988.6 | memory(GiB): 83.46 | elapsed time: 3m 8s | "
        "remaining time: 16h 12m 43s | learning rate: 9.999746E-07 | global batch size:   128 | "
        "loss: -2.529132E-02 | kl: 1.107648E-02 | reward: 7.636719E-01 | loss scale: 1.0 | "
        "grad norm: 75.173 | num zeros: 92172.0 | number of skipped iterations:   0 | "
        "number of nan iterations:   0 |\n")


def test_the_iteration_is_the_step_and_train_iters_the_total():
    got = steps(LINE)
    assert list(got) == [2] and totals(LINE) == [624]
    assert got[2]["loss"] == -0.02529132 and got[2]["reward"] == 0.7636719
    assert got[2]["grad norm"] == 75.173 and got[2]["learning rate"] == 9.999746e-07
    assert got[2]["elapsed time per iteration (ms)"] == 3988.6
    # Durations are not numbers: skipped, not misread.
    assert "elapsed time" not in got[2] and "remaining time" not in got[2]


def test_old_megatron_lines_without_a_time_and_lm_loss():
    line = (" iteration      100/  500000 | consumed samples:        51200 | elapsed time per "
            "iteration (ms): 812.3 | learning rate: 1.500E-04 | global batch size:   512 | "
            "lm loss: 6.412345E+00 | loss scale: 65536.0 | number of skipped iterations:   0 | "
            "number of nan iterations:   0 |\n")
    assert steps(line) == {100: {"consumed samples": 51200.0, "elapsed time per iteration (ms)": 812.3,
                                 "learning rate": 1.5e-04, "global batch size": 512.0,
                                 "lm loss": 6.412345, "loss scale": 65536.0,
                                 "number of skipped iterations": 0.0, "number of nan iterations": 0.0}}


def test_a_line_cut_by_a_paste_loses_only_its_unfinished_item():
    cut = LINE[:LINE.index("reward: ") + len("reward: 7.63")]
    got = steps(cut)
    assert got[2]["kl"] == 0.01107648 and "reward" not in got[2]


def test_the_last_iteration_of_train_iters_is_the_end_of_the_run():
    last = LINE.replace("iteration        2/     624", "iteration      624/     624")
    assert run_state(model(LINE + last), []) == RunState.FINISHED


def test_look_alikes_are_not_iterations():
    text = (" validation loss at iteration 100 | lm loss value: 6.3E+00 | lm loss PPL: 5.5E+02 |\n"
            "iteration 3/10 done\n")
    assert steps(text) == {}
