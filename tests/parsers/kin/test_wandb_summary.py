"""wandb's console footer."""

import pytest

from tests.parsers.kin.helpers import ends, model, steps

FOOTER = ("wandb: Run history:\nwandb:   actor/entropy ▁▂▃█\nwandb: \nwandb: Run summary:\n"
          "wandb:       actor/entropy 0.0643\nwandb:  critic/score/mean 0.98691\n"
          "wandb: training/global_step 105\nwandb:     timing_s/step nan\nwandb:   _runtime 3600\n"
          "wandb: \nwandb: 🚀 View run x at: https://wandb.ai/x\n")


def test_the_summary_is_the_last_values_of_a_log_without_others():
    got = steps(FOOTER)
    assert list(got) == [105]
    assert got[105]["critic/score/mean"] == 0.98691 and "_runtime" not in got[105]
    assert ends(FOOTER) == 2  # the summary's, and the footer's ``View run`` line


def test_coloured_and_ray_prefixed_rows():
    text = "".join(f"(Runner pid=1) \x1b[1;34mwandb\x1b[0m: {row}\n" for row in
                   ["Run summary:", "  reward/overall 0.5", "   timing_s/step 61.2", ""])
    assert steps(text) == {1: {"reward/overall": 0.5, "timing_s/step": 61.2}}


def test_no_step_key_takes_the_run_bar_position():
    text = "Running step: 100%|██████████| 50/50 [50:00<00:00, 60.00s/it]\n" + \
        "wandb: Run summary:\nwandb: reward/overall 0.7\nwandb: \n"
    assert steps(text) == {50: {"reward/overall": 0.7}}


def test_a_log_that_printed_its_steps_keeps_them():
    text = "step:7 - critic/score/mean:0.5 - actor/entropy:0.1\n" + FOOTER
    run = model(text)
    assert run.last_step == 7 and run.series["critic/score/mean"].last() == (7, 0.5)
    assert run.finished


def test_a_summary_cut_at_the_end_of_the_log_is_still_read():
    assert steps("wandb: Run summary:\nwandb: reward 0.25\nwandb: loss 0.1\n") == {1: {"reward": 0.25, "loss": 0.1}}


@pytest.mark.parametrize("footer", [
    "wandb: 🚀 View run gsm8k-sft at: https://wandb.ai/team/gsm8k-sft/runs/qfm6f7w2\n",
    "wandb: Find logs at: wandb/run-20241217_072147-qfm6f7w2/logs\n",
    "wandb: Synced 5 W&B file(s), 0 media file(s), 0 artifact file(s) and 0 other file(s)\n",
    "(TaskRunner pid=7) \x1b[1;34mwandb\x1b[0m: ⭐️ View run cola at: https://wandb.ai/t/p/runs/1\n",
])
def test_the_footer_alone_says_the_process_ended(footer):
    """A run that logs no summary still ends with wandb's footer (corpus 029, verl's SFT trainer)."""
    assert ends("step:7 - train/loss:0.01\n" + footer) == 1


def test_wandbs_other_lines_say_nothing_of_an_end():
    text = ("wandb: Tracking run with wandb version 0.19.1\n"
            "wandb: Run data is saved locally in /runs/wandb/run-1\n"
            "wandb: ⭐️ View project at https://wandb.ai/t/p\n"
            "wandb: 🚀 View run at https://wandb.ai/t/p/runs/1\n")  # the start's banner: no name
    assert ends(text) == 0
