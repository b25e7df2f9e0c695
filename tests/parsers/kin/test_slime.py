"""slime / Miles metric lines."""

from tests.parsers.kin.helpers import model, steps, totals

PREFIX = "\x1b[36m(MegatronTrainRayActor pid=1)\x1b[0m [2026-09-02 18:00:00] "


def test_optimizer_steps_belong_to_the_rollout_reported_before_them():
    text = (f"{PREFIX}data.py:119 - rollout 3: {{'rollout/raw_reward': 0.5, 'rollout/response_lengths': 120.0}}\n"
            f"{PREFIX}model.py:918 - step 6: {{'train/loss': 0.2, 'train/kl_loss': 0.01, 'train/step': 6}}\n"
            f"{PREFIX}model.py:918 - step 7: {{'train/loss': 0.1, 'train/kl_loss': 0.02, 'train/step': 7}}\n"
            f"{PREFIX}train_metric_utils.py:401 - perf 3: {{'perf/step_time': 42.5, 'perf/train_time': 20.0}}"
            " [repeated 7x across cluster]\n")
    got = steps(text)
    assert list(got) == [3]
    assert got[3] == {"rollout/raw_reward": 0.5, "rollout/response_lengths": 120.0, "train/loss": 0.1,
                      "train/kl_loss": 0.02, "train/step": 7.0, "perf/step_time": 42.5, "perf/train_time": 20.0}


def test_a_perf_line_of_the_next_rollout_does_not_take_the_step_trained_before_it():
    # train_async: the rollout manager reports rollout 272 while the trainer finishes 271.
    text = ("(RolloutManager pid=2) [t] rollout.py:720 - perf 271: {'perf/rollout_time': 0.9}\n"
            "(RolloutManager pid=2) [t] rollout.py:720 - perf 272: {'perf/rollout_time': 0.8}\n"
            f"{PREFIX}model.py:665 - step 271: {{'train/loss': 11.9, 'train/step': 271}}\n")
    got = steps(text)
    assert got[271] == {"perf/rollout_time": 0.9, "train/loss": 11.9, "train/step": 271.0}
    assert got[272] == {"perf/rollout_time": 0.8}


def test_step_lines_alone_keep_their_numbers_and_critic_steps_too():
    text = ("step 1: {'train/loss': 0.1, 'train/grad_norm': 2955012562.8240876, 'train/kl_loss': -7.4e-12}\n"
            "critic-step 1: {'train/critic-value_loss': 10.0}\n")
    assert steps(text) == {1: {"train/loss": 0.1, "train/grad_norm": 2955012562.8240876,
                               "train/kl_loss": -7.4e-12, "train/critic-value_loss": 10.0}}


def test_numpy_values_of_the_rollout_manager_and_eval_lines():
    text = ("(RolloutManager pid=2) [t] metrics.py:120 - perf 0: {'rollout/num_training_samples': 32, "
            "'perf/rollout_time': np.float64(60.5)}\n"
            "(RolloutManager pid=2) [t] rollout_metrics.py:247 - eval 0: {'eval/aime': 0.0698958333333333}\n")
    run = model(text)
    assert run.latest() == {"rollout/num_training_samples": 32.0, "perf/rollout_time": 60.5,
                            "eval/aime": 0.0698958333333333}


def test_the_argument_dump_gives_the_last_rollout_id():
    assert totals("  num_rollout ..................................... 3000\n") == [2999]
    assert totals("  num_rollout ..................................... None\n") == []
    assert totals("  num_rollout_per_epoch ........................... 10\n") == []


def test_look_alikes_are_not_slime_lines():
    text = ("First rollout sample: reward: {'score': 0.0, 'tool_call_count': 1}\n"
            "rollout 3 pos 1: reassembled shape (1, 2)\n"
            "[NLA ROLLOUT] {\"rollout_id\": 1, \"reward_mean\": -0.4}\n")
    assert steps(text) == {}
