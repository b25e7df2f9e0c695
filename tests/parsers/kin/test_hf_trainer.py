"""The HF Trainer family's dicts: TRL, ms-swift, LlamaFactory."""

import math
import re

import pytest

from tests.corpus import REPO
from tests.parsers.kin.helpers import bars, ends, model, steps, totals
from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import StepRecord

LOGS = REPO / "tests" / "fixtures" / "logs"

BAR = " 20%|██        | 10/50 [00:17<01:06,  1.67s/it]"
TRL = "{'loss': 0.0, 'grad_norm': 0.08, 'reward': 1.71, 'kl': 0.0005, 'epoch': 0.31}"


def test_trl_dict_lines_without_a_bar_are_numbered_in_order():
    assert list(steps(f"{TRL}\n{TRL}\n")) == [1, 2]


def test_a_bar_and_a_dict_on_one_line_give_the_step_and_the_progress():
    run = model(f"{BAR}{TRL}\n")
    assert run.last_step == 10
    assert (run.progress.done, run.progress.total, run.progress.sec_per_it) == (10, 50, 1.67)


def test_a_bar_on_the_previous_line():
    text = f"{BAR}\n{TRL}\n 40%|████      | 20/50 [00:34<00:51,  1.70s/it]\n{TRL}\n"
    assert list(steps(text)) == [10, 20]


def test_a_stale_bar_does_not_collapse_later_dicts_into_one_step():
    text = f"  0%|          | 0/50 [00:00<?, ?it/s]\n{TRL}\n{TRL}\n"
    assert list(steps(text)) == [1, 2]


def test_evaluation_bars_and_dicts_stay_at_the_training_step():
    text = (f"{BAR}{TRL}\n 67%|██████▋   | 2/3 [00:00<00:00,  4.26it/s]\n"
            "{'eval_loss': 0.68, 'eval_reward': 0.5, 'eval_runtime': 5.7, 'epoch': 1.0}\n")
    run = model(text)
    assert run.last_step == 10 and run.latest()["eval_reward"] == 0.5
    assert (run.progress.done, run.progress.total) == (10, 50)  # the 2/3 bar is not the run's


def test_string_values_of_new_transformers():
    text = ("  4%|▍         | 9/200 [03:00<1:04:17, 20.20s/it]{'loss': '-0.007415', 'grad_norm': '0.2584', "
            "'num_tokens': '4.996e+04', 'reward': '0.9688', 'epoch': '0.045'}\n")
    assert steps(text) == {9: {"loss": -0.007415, "grad_norm": 0.2584, "num_tokens": 49960.0,
                               "reward": 0.9688, "epoch": 0.045}}


def test_nan_negative_and_scientific_values():
    got = steps("{'loss': nan, 'grad_norm': inf, 'kl': -1.5e-05, 'reward': -0.0}\n")[1]
    assert math.isnan(got["loss"]) and got["grad_norm"] == math.inf and got["kl"] == -1.5e-05


def test_ms_swift_step_and_total_from_its_progress_string():
    text = ("Train:   2%|▏         | 1/60 [00:42<41:47, 42.51s/it]{'loss': '0.3713', 'grad_norm': '0.8901', "
            "'global_step/max_steps': '5/60', 'percentage': '8.33%', 'elapsed_time': '43s'}\n")
    assert steps(text) == {5: {"loss": 0.3713, "grad_norm": 0.8901}}
    assert totals(text) == [60]


def test_json_lines_and_llamafactory_steps():
    assert list(steps('{"loss": 0.1, "grad_norm": 1.0, "global_step/max_steps": "7/10"}\n')) == [7]
    text = '{"current_steps": 10, "total_steps": 1287, "loss": -0.1994, "reward": 0.13, "epoch": 0.01}\n'
    assert steps(text) == {10: {"loss": -0.1994, "reward": 0.13, "epoch": 0.01}}
    assert totals(text) == [1287]
    assert math.isnan(steps('{"loss": NaN, "grad_norm": 1.0}\n')[1]["loss"])


def test_trl_ppo_dicts_have_no_loss_key():
    text = "{'eps': 1, 'objective/kl': 10.9, 'objective/scores': 1.9, 'loss/policy_avg': -0.005, 'episode': 240}\n"
    assert steps(text)[1]["objective/kl"] == 10.9


def test_the_trainer_end_dict_and_metrics_block_end_the_run():
    assert ends("{'train_runtime': 85.46, 'train_samples_per_second': 11.7, 'train_loss': 0.50, 'epoch': 1.0}\n")
    assert ends("***** train metrics *****\n  epoch                    =        1.0\n"
                "  train_runtime            = 0:57:42.78\n") == 1
    assert steps("{'train_runtime': 85.46, 'train_loss': 0.50, 'epoch': 1.0}\n") == {}


def test_config_and_reward_dicts_are_not_metrics():
    text = ("{'lr': 1e-06, 'loss': 'grpo', 'beta': 0.04}\n"
            "reward: {'score': 1.0, 'acc': True}\n"
            "{'loss_type': 'dr_grpo', 'loss': 'x'}\n")
    assert steps(text) == {}


def test_a_bar_without_its_pipe_part():
    text = ("  4% 99/2238 [1:48:23<35:43:37, 60.13s/it]\n"
            "  4% 100/2238 [1:49:59<42:08:58, 70.97s/it]{'loss': 2.6446, 'learning_rate': 5e-05, 'epoch': 0.04}\n")
    run = model(text)
    assert run.last_step == 100
    assert (run.progress.done, run.progress.total) == (100, 2238)
    assert run.sec_per_it == 70.97


def test_a_held_dict_is_joined_only_to_the_adjacent_row():
    # The row with the rest must itself hold a needle (here the next dict's 'loss':), or
    # a remote grep would not send it; a row without one leaves the dict cut.
    text = ("{'loss': 0.27, 'grad_norm': 1.19, 'global_ste\n"
            "p/max_steps': '33/94', 'epoch': 0.7} {'loss': 0.25, 'grad_norm': 1.0, 'global_step/max_steps': '34/94'}\n")
    assert steps(text) == {33: {"loss": 0.27, "grad_norm": 1.19, "epoch": 0.7}, 34: {"loss": 0.25, "grad_norm": 1.0}}
    apart = ("{'loss': 0.27, 'grad_norm': 1.19, 'global_ste\nnoise 'loss': \n"
             "p/max_steps': '33/94'} {'loss': 0.25, 'grad_norm': 1.0, 'global_step/max_steps': '34/94'}\n")
    assert steps(apart) == {1: {"loss": 0.27, "grad_norm": 1.19}, 34: {"loss": 0.25, "grad_norm": 1.0}}


def test_a_dict_whose_opening_brace_was_lost():
    text = "'loss': -0.0, 'grad_norm': 0.0, 'reward': 0.34, 'global_step/max_steps': '5/3766'}\n"
    assert steps(text) == {5: {"loss": -0.0, "grad_norm": 0.0, "reward": 0.34}}


def test_description_bars_before_the_first_dict_are_not_the_run_bar():
    text = ("Map: 100%|██████████| 80/80 [00:00<00:00, 678.72 examples/s]\n"
            " 20%|██        | 10/50 [00:17<01:06,  1.67s/it]" + TRL + "\n")
    found = bars(text)
    assert found[0].desc == "Map" and not found[0].training
    assert found[-1].training and (found[-1].n, found[-1].total) == (10, 50)


def bar(n: int, total: int = 30) -> str:
    return f" {100 * n // total:2d}%|█         | {n}/{total} [00:01<00:10,  2.45it/s]"


CLEAR = "\r" + " " * 47 + "\r"


def dict_line(i: int) -> str:
    return f"{{'loss': '0.{i:04d}', 'grad_norm': '1.1', 'reward': '-0.3', 'epoch': '0.0{i}'}}\n"


def test_unbuffered_dicts_take_the_count_of_the_bar_they_follow():
    # tqdm.write: clear, the dict (stdout), the bar drawn again on the next line.
    text = ("\r" + bar(4) + "\r" + bar(5) + CLEAR + dict_line(1) + "\r" + bar(5) + "\r" + bar(9) + "\r"
            + bar(10) + CLEAR + dict_line(2) + "\r" + bar(10) + "\n")
    assert list(steps(text)) == [5, 10]


def test_a_fast_bar_not_redrawn_up_to_the_dict_leaves_its_step_to_the_redraw_after_it():
    # LLaMA-Factory 0.9.3 at 100 it/s, logging_steps=3: tqdm redraws at most every 0.1 s, so
    # the bar before each clear is the previous write's redraw (0, then 3) or a tick short
    # (7 for step 9); the dict's own step is the count tqdm.write redraws right after it.
    text = ("\r" + bar(0, 10) + CLEAR + dict_line(1) + "\r" + bar(3, 10) + CLEAR + dict_line(2)
            + "\r" + bar(6, 10) + "\r" + bar(7, 10) + CLEAR + dict_line(3) + "\r" + bar(9, 10) + "\r"
            + bar(10, 10) + "\n")
    assert list(steps(text)) == [3, 6, 9]


def test_a_dict_held_for_its_redraw_is_shown_once_the_writer_pauses():
    # Its redraw is on a line with no newline yet, maybe for a whole slow step: followed live,
    # the dict is shown at the bar's count when the reader catches up, not a write later.
    scanner = LogScanner()
    scanner.feed(("\r" + bar(4) + "\r" + bar(5) + CLEAR + dict_line(1) + "\r" + bar(5) + "\r" + bar(6)
                  + CLEAR + dict_line(2)).encode())
    shown = scanner.feed(("\r" + bar(6)).encode()) + scanner.settle()
    assert [r.step for r in shown if isinstance(r, StepRecord)] == [6]


@pytest.mark.parametrize(("name", "logged"), [
    ("lf_sft_logging_steps3.log", [3, 6, 9]),
    ("lf_sft_finished.log", list(range(1, 9))),
    ("lf_ppo_finished.log", list(range(1, 9))),  # its bar redraws lazily, never past 7/8
    ("lf_sft_checkpoint_path_is_file_step4.log", [1, 2, 3, 4]),
    ("lf_rm_checkpoint_save_tied_weights_raises.log", list(range(1, 9))),
    ("lf_sft_eval_steps4_logging_steps2.log", [2, 4, 6, 8, 10, 12]),  # 8 behind a 7/12 bar
])
def test_llamafactory_dicts_take_the_steps_they_were_logged_at(name: str, logged: list[int]):
    data = (LOGS / "generated" / "llamafactory" / name).read_bytes()
    assert list(steps(data)) == logged


def test_buffered_dicts_take_the_counts_tqdm_redrew_after_its_clears():
    # stdout block-buffered: every write leaves clear + redraw on stderr at once, the dicts
    # come later in a burst (logging_steps=5: written at 5, 10, 15).
    bars = "".join("\r" + bar(n) + (CLEAR + "\r" + bar(n) if n % 5 == 0 else "") for n in range(1, 16))
    text = bars + "\n" + "".join(dict_line(i) for i in (1, 2, 3))
    assert list(steps(text)) == [5, 10, 15]


def test_a_burst_flushed_right_after_a_clear_leaves_its_redraw_for_the_next_bar_line():
    text = ("\r" + bar(1) + CLEAR + "\r" + bar(1) + "\r" + bar(2) + CLEAR + dict_line(1) + dict_line(2)
            + "\r" + bar(2) + "\r" + bar(3) + CLEAR + "\r" + bar(3) + "\n" + dict_line(3))
    assert list(steps(text)) == [1, 2, 3]


def test_a_resumed_run_starts_at_its_checkpoint():
    text = ("\r" + bar(0) + "\r" + bar(16) + CLEAR + "\r" + bar(16) + "\r" + bar(17) + CLEAR + "\r"
            + bar(17) + "\n" + dict_line(1) + dict_line(2))
    assert list(steps(text)) == [16, 17]


def test_a_dict_with_one_number_beside_nulls_or_a_cut_is_still_a_trainers():
    # LLaMA-Factory 845: its JSON lines carry null losses; the paste cut the last one.
    lines = ('{"loss": 0.0033, "eval_loss": null, "predict_loss": null, "reward": -0.0829}\n'
             '{"loss": 0.0408, "eval_loss": null, "predict_loss": null\n')
    assert [got["loss"] for got in steps(lines).values()] == [0.0033, 0.0408]
    assert steps("{'loss': 0.5}\n") == {}  # one number alone is no trainer's dict
    # TRL 4086: a dict cut inside its second key still had its loss whole.
    assert steps("{'loss': -0.0684, 'grad_nor\n") == {1: {"loss": -0.0684}}
    run = model("  0%|          | 3/1562 [18:48<164:33:29, 379.99s/it]\n{'loss': -0.0684, 'grad_nor\n")
    assert (run.last_step, run.total_steps) == (3, 1562)  # and its bar is the run's


def test_a_burst_with_more_dicts_than_marks_began_before_the_log():
    # A log rotated under the run (copytruncate) at bar 16: its first burst flushes the dicts of
    # steps 11-20, but only the marks of 16-20 are in this file; the first five came before them.
    marks = "".join("\r" + bar(n) + CLEAR + "\r" + bar(n) for n in range(16, 21))
    text = marks + "\r" + bar(21) + CLEAR + "".join(dict_line(i) for i in range(11, 21)) + "\r" + bar(21) + "\n"
    got = steps(text)
    assert list(got) == list(range(11, 21))
    assert got[11]["loss"] == 0.0011 and got[20]["loss"] == 0.002


@pytest.mark.parametrize("name", ["grpo_finished.log", "rloo_finished.log", "dpo_finished.log",
                                  "grpo_trl019_finished.log"])
def test_a_log_cut_at_any_bar_redraw_numbers_its_dicts_as_the_whole_log_does(name: str):
    # What logrotate's copytruncate leaves of a real buffered TRL log (generated/trl): the file from one
    # of tqdm's writes on. Wherever a cleared redraw (a mark) comes before the first dict, each
    # dict keeps its step in the whole log, give or take the one a flush may or may not have
    # taken along (the dict being printed when the buffer filled: the file cannot tell).
    data = (LOGS / "generated" / "trl" / name).read_bytes()
    whole = steps(data)
    step_of = {tuple(sorted(metrics.items())): step for step, metrics in whole.items()}
    first_dict = data.index(b"{'")
    cuts = [m.start() for m in re.finditer(rb"\r *\d+%\|", data) if m.start() > first_dict]
    checked = 0
    for cut in cuts:
        part = data[cut:]
        if not re.search(rb"\r +\r\r? *\d+%\|", part[:part.find(b"{'")]):
            continue  # no mark before the first dict: nothing in the file places it
        got = steps(part)
        assert all(abs(step - step_of[tuple(sorted(metrics.items()))]) <= 1
                   for step, metrics in got.items()), cut
        assert abs(max(got) - max(whole)) <= 1, cut
        checked += 1
    assert checked > 10


@pytest.mark.parametrize("name", ["grpo_finished.log", "grpo_crash_reward.log"])
def test_a_followed_log_shows_its_last_burst_once_the_writer_pauses(name: str):
    # Followed live, a buffered run's last burst (flushed at the end, or just before a crash's
    # traceback) gets no bar tick after it; when the reader catches up, the steps are shown
    # as `check` reads them.
    data = (LOGS / "generated" / "trl" / name).read_bytes()
    scanner = LogScanner()
    live = scanner.feed(data) + scanner.settle()
    assert {r.step for r in live if isinstance(r, StepRecord)} == set(steps(data))
