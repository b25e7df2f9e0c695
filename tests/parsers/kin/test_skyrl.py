"""SkyRL's console logger block, status dict, reward and step-time lines."""

from tests.parsers.kin.helpers import model, steps

P = "(skyrl_entrypoint pid=8455) 2026-03-26 15:05:51.980 | INFO     | "
BLOCK = ("{{'generate/avg_num_tokens': '512.2500',\n 'loss/avg_kl': '0.0012',\n 'policy/grad_norm': '0.3125',\n"
         " 'policy/policy_entropy': '0.8123',\n 'policy/policy_kl': '0.0009',\n 'policy/policy_loss': '-0.0123',\n"
         " 'reward/avg_raw_reward': '0.4500',\n 'timing/step': '84.1234',\n 'trainer/epoch': 0,\n"
         " 'trainer/global_step': {step}}}\n")


def test_a_console_logger_block_takes_its_global_step():
    text = f"{P}skyrl_train.utils.tracking:log:138 - Step 3: \n" + BLOCK.format(step=3)
    got = steps(text)
    assert list(got) == [3]
    assert got[3]["policy/policy_loss"] == -0.0123 and got[3]["reward/avg_raw_reward"] == 0.45
    assert got[3]["policy/policy_kl"] == 0.0009 and got[3]["trainer/global_step"] == 3
    # Rows without a needle (generate/, loss/, timing/) are not read: the status dict and
    # 'Finished: step' lines give response length and step time on every run.
    assert "timing/step" not in got[3]


def test_a_block_whose_header_was_lost_waits_for_its_global_step():
    got = steps(BLOCK.format(step=4) + BLOCK.format(step=5))
    assert list(got) == [4, 5] and got[5]["policy/grad_norm"] == 0.3125


def test_the_per_step_lines_belong_to_the_step_after_the_bar_count():
    text = (f"{P}skyrl.train.trainer:train:1117 - reward/avg_pass_at_4: 0.5625, reward/avg_raw_reward: 0.328125, "
            "reward/mean_positive_reward: 0.6\n"
            f"{P}skyrl.train.trainer:train:210 - Finished: 'step', time cost: 1331.13s\n"
            f"{P}skyrl.train.trainer:train:320 - {{'final_loss': -0.00014, 'policy_loss': -0.00014, "
            "'policy_entropy': 0.3656, 'response_length': 1024.0, 'policy_kl': 0.00041, 'grad_norm': 0.37}\n"
            "Training Batches Processed:  14%|█▍        | 1/7 [22:36<2:15:37, 1356.23s/it]\n"
            f"{P}skyrl.train.trainer:train:210 - Finished: 'step', time cost: 1200.00s\n")
    run = model(text)
    assert run.series["timing/step"].last() == (2, 1200.0)
    assert run.series["policy_entropy"].last() == (1, 0.3656)
    assert run.series["reward/avg_raw_reward"].last() == (1, 0.328125)
    assert (run.progress.done, run.progress.total) == (1, 7)
