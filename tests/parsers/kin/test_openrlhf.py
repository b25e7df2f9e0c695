"""OpenRLHF's bar postfix and Global step lines."""

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
