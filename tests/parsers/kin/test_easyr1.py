"""EasyR1's Step + YAML blocks (rows written as hiyouga/EasyR1's ConsoleLogger prints them)."""

import math

from tests.parsers.kin.helpers import model, steps

P = "\x1b[36m(Runner pid=2171)\x1b[0m "


def yaml_block(step: int) -> str:
    rows = ["Step {}", "actor:", "  entropy_loss: 0.5306", "  grad_norm: .nan", "  kl_loss: 0.0012",
            "  lr: 1.0e-06", "  pg_loss: -0.0028", "critic:", "  score:", "    mean: 0.4625", "reward:",
            "  overall: 0.45", "response_length:", "  mean: 312.5", "timing_s:", "  step: 84.2"]
    return "".join(f"{P}{row.format(step)}\n" for row in rows)


def test_a_yaml_block_flattens_back_to_verl_names():
    got = steps(yaml_block(3))[3]
    assert got["actor/entropy_loss"] == 0.5306 and math.isnan(got["actor/grad_norm"])
    assert got["actor/lr"] == 1e-06 and got["critic/score/mean"] == 0.4625
    assert got["reward/overall"] == 0.45 and got["timing_s/step"] == 84.2


def test_panels_read_the_block():
    run = model(yaml_block(1) + f"{P}Start generating batch...\n" + yaml_block(2))
    assert run.last_step == 2
    assert run.sec_per_it == 84.2


def test_the_config_dump_is_not_a_step_and_a_prose_row_ends_the_block():
    text = (f"{P}Config\n{P}algorithm:\n{P}  kl_coef: 0.01\n" + yaml_block(1)
            + f"{P}Load from checkpoint: /ckpt.\n{P}  mean: 9.9\n")
    got = steps(text)
    assert list(got) == [1] and got[1]["response_length/mean"] == 312.5


def test_the_first_logger_line_format():
    text = f"{P}step 5: - actor/pg_loss:-0.003 - critic/score/mean:0.412 - timing_s/step:61.250\n"
    assert steps(text) == {5: {"actor/pg_loss": -0.003, "critic/score/mean": 0.412, "timing_s/step": 61.25}}


def test_running_step_bar_is_the_progress():
    run = model(f"{P}Total training steps: 200\nRunning step:  10%|█         | 20/200 [20:00<3:00:00, 60.00s/it]\n")
    assert (run.progress.done, run.progress.total) == (20, 200)
