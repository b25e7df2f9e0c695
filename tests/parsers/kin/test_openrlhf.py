"""OpenRLHF's bar postfix and Global step lines."""

from pathlib import Path

from tests.parsers.kin.helpers import model, steps


def test_postfix_values_belong_to_the_step_after_the_episode_count():
    text = ("Episode [1/2]:   8%|▊         | 1/12 [03:32<38:52, 212.0s/it]\n"
            "Train epoch [1/1]: 100%|██████████| 8/8 [00:30<00:00,  3.80s/it, act_loss=-0.0123, reward=0.5, "
            "return=0.49, gen_len=312, tot_len=400, kl=0.00123, act_lr=1e-06, grad_norm=0.3]\n"
            "Train epoch [1/1]: 100%|██████████| 8/8 [00:10<00:00,  1.2s/it, critic_loss=0.05, values=0.1, critic_lr=5e-06]\n")
    run = model(text)
    assert run.last_step == 2
    assert run.latest() == {"act_loss": -0.0123, "reward": 0.5, "return": 0.49, "gen_len": 312.0,
                            "tot_len": 400.0, "kl": 0.00123, "act_lr": 1e-06, "grad_norm": 0.3,
                            "critic_loss": 0.05, "values": 0.1, "critic_lr": 5e-06}
    assert (run.progress.done, run.progress.total) == (1, 24)


def test_global_step_lines_carry_their_step():
    text = ("2026-01-05 07:33:55 INFO ✨ Global step 12: {'policy_loss': -0.01, 'reward': 0.6, 'kl': 0.002, "
            "'response_length': 500.0, 'timing/step_total': 95.5}\n")
    assert steps(text) == {12: {"policy_loss": -0.01, "reward": 0.6, "kl": 0.002, "response_length": 500.0,
                                "timing/step_total": 95.5}}


def test_other_bars_postfixes_are_not_metrics():
    text = ("Processed prompts: 100%|██████████| 16/16 [00:12<00:00,  1.25it/s, est. speed input: 1.0 toks/s]\n"
            "Generate samples:  50%|█████     | 8/16 [00:10<00:10,  1.0s/it, prompts_consumed=8]\n")
    assert steps(text) == {}


# The KD trainer's two bars as a user pasted them (kin/openrlhf641_…): the epoch bar, then
# the batches of epoch 0 with the losses in the postfix, its closing bracket lost.
_KD = (Path(__file__).parents[2] / "fixtures" / "logs" / "kin"
       / "openrlhf641_kd_train_epoch_and_step_bars_250_of_250_then_stuck.log").read_text(encoding="utf-8")
_EPOCH_BAR, _STEP_BAR = _KD.splitlines()


def test_the_other_trainers_batch_bar_is_the_run_scaled_by_the_epoch_bar():
    three = _EPOCH_BAR.replace("100%", "0%").replace("1/1 [09:28<00:00, 568.32s/it]", "0/3 [00:00<?, ?it/s]")
    second_epoch = _STEP_BAR.replace("epoch 0", "epoch 1").replace("100%", "40%").replace("250/250", "100/250")
    run = model(three + "\n" + second_epoch + "]\n")
    assert (run.progress.done, run.progress.total) == (350, 750)
    assert run.last_step == 350 and not run.finished
    assert run.latest()["lr"] == 5e-7


def test_a_batch_bar_at_its_total_in_the_last_epoch_is_the_runs_end():
    run = model(_KD)
    assert (run.progress.done, run.progress.total) == (250, 250) and run.finished


def test_a_postfix_cut_before_its_bracket_keeps_all_but_its_last_pair():
    assert steps(_KD) == {250: {"gpt_loss": 0.686, "distil_loss": 0.9, "loss_mean": 0.575}}
    cut = _STEP_BAR[: _STEP_BAR.index("loss_mean=") + len("loss_mean=0.5")]
    assert steps(cut) == {250: {"gpt_loss": 0.686, "distil_loss": 0.9}}


def test_without_the_epoch_bar_the_batches_carry_their_losses_but_no_total():
    second_epoch = _STEP_BAR.replace("epoch 0", "epoch 1")
    run = model(second_epoch + "]\n")
    assert run.last_step == 500 and run.progress is None and not run.finished
