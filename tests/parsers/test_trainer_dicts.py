"""TRL and ms-swift dict lines."""

from tui.parsers.trainer_dicts import parse_dict_line


def test_trl_dict_line_has_metrics_and_no_step():
    line = ("{'loss': 0.0, 'grad_norm': 0.08656957000494003, 'reward': 1.7171093285083772, "
            "'kl': 0.0005371240986278281, 'epoch': 0.31}")
    metrics, step, total = parse_dict_line(line)
    assert metrics["reward"] == 1.7171093285083772 and metrics["epoch"] == 0.31
    assert step is None and total is None


def test_ms_swift_dict_line_carries_its_step_and_total_as_a_string():
    line = ("'loss': -0.0, 'grad_norm': 0.0, 'reward': 0.34375, 'global_step/max_steps': '5/3766', "
            "'percentage': '0.13%', 'memory(GiB)': 56.74, 'train_speed(iter/s)': 0.056099}")
    metrics, step, total = parse_dict_line(line)
    assert (step, total) == (5, 3766)
    assert metrics["memory(GiB)"] == 56.74 and "percentage" not in metrics


def test_a_config_dict_is_not_a_metric_line():
    assert parse_dict_line("{'lr': 1e-6, 'loss': 'grpo'}") is None
