"""NeMo-RL banners and bullets."""

from tests.parsers.kin.helpers import ends, model, steps, totals

BANNER = "=" * 25


def block(step: int, of: int, loss: float) -> str:
    return (f"\n{BANNER} Step {step}/{of} {BANNER}\n▶ Preparing batch...\n\n📊 Training Results:\n"
            f"  • Loss: {loss:.4f}\n  • Generation KL Error: 0.0003\n  • Avg Reward: 0.5000\n"
            "  • Mean Generation Length: 229.0537\n\n⏱️  Timing:\n  • Total step time: 970.66s\n"
            "  • policy_training: 744.26s (76.7%)\n\n🔍 Performance Metrics:\n"
            "  • Mean Total Tokens per Sample: 232.05\n  • Throughputs (per GPU):\n"
            "    - E2E (Samples/sec/gpu): 0.04\n  • Training Model Floating Point Utilization: 17.62%\n")


def test_a_step_report_under_its_banner():
    got = steps(block(4, 10, 0.0123))
    assert got == {4: {"train/loss": 0.0123, "train/gen_kl_error": 0.0003, "train/reward": 0.5,
                       "train/mean_gen_tokens_per_sample": 229.0537,
                       "timing/train/total_step_time": 970.66, "timing/train/policy_training": 744.26,
                       "train/mean_total_tokens_per_sample": 232.05,
                       "train/training_model_floating_point_utilization": 17.62}}
    assert totals(block(4, 10, 0.0)) == [10]


def test_validation_bullets_and_the_initial_validation_at_step_zero():
    text = ("\n📊 Validation Results:\n    • Accuracy: 0.4500\n    • Average response length: 812.3 tokens\n"
            "    • Samples processed: 500\n\n  ⏱️  Validation Timing:\n    • Total validation time: 60.12s\n")
    assert steps(text) == {0: {"validation/accuracy": 0.45, "validation/avg_length": 812.3}}
    run = model(text + block(1, 5, 0.1))
    assert run.latest()["validation/accuracy"] == 0.45 and run.last_step == 1


def test_steps_restarting_in_a_new_epoch_continue_the_run_count():
    text = (f"{BANNER} Epoch 1/2 {BANNER}\n" + block(1, 3, 0.1) + block(2, 3, 0.1) + block(3, 3, 0.1)
            + f"{BANNER} Epoch 2/2 {BANNER}\n" + block(1, 3, 0.2) + block(2, 3, 0.3))
    run = model(text)
    assert run.last_step == 5 and run.total_steps == 6
    assert run.series["train/loss"].last() == (5, 0.3)


def test_the_early_stop_is_the_end_and_bullets_in_text_are_ignored():
    assert ends(block(10, 10, 0.0) + "Max number of steps has been reached, stopping training early\n") == 1
    assert steps("Answer:\n  • Total: 5 apples\n  • Cost: 3 dollars\n") == {}
