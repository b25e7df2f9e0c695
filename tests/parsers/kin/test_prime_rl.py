"""prime-rl's ``SUCCESS Step N | Name: value | …`` lines (orchestrator and trainer)."""

from tests.parsers.kin.helpers import ends, model, steps
from tui.rules.run_state import RunState, run_state

# prime-rl PR 1318's orchestrator line.
ORCHESTRATOR = ("02:33:26 SUCCESS Step 28 | Time: 73.77s | Reward: 0.3887 | Throughput: 2408.9 tokens/s | "
                "Seq. Length: 345.6 tokens/sample | Async Level: 1 | Max. Off-Policy Level: 0\n")
# The trainer's line as trainer/rl/train.py formats it.
TRAINER = ("02:33:31 SUCCESS Step 28 | Time: 41.20s | Loss: 0.0123 | Entropy: 0.4567 | Mismatch KL: 0.0012 | "
           "Grad. Norm: 0.2345 | LR: 1.00e-06 | Throughput: 5321 tokens/s | MFU: 12.3% | Peak Mem.: 45.1 GiB\n")


def test_each_item_is_a_metric_named_as_the_other_trainers_name_it():
    assert steps(ORCHESTRATOR) == {28: {"step_time": 73.77, "reward": 0.3887, "throughput": 2408.9,
                                        "seq_length": 345.6, "async_level": 1.0,
                                        "max_off-policy_level": 0.0}}


def test_the_trainers_line_of_the_same_step_adds_its_losses():
    got = steps(ORCHESTRATOR + TRAINER)[28]
    assert (got["loss"], got["entropy"], got["grad_norm"], got["mismatch_kl"]) == (0.0123, 0.4567, 0.2345, 0.0012)
    assert (got["lr"], got["mfu"], got["peak_mem"], got["reward"]) == (1e-06, 12.3, 45.1, 0.3887)


def test_the_number_of_a_fraction_is_its_first():
    line = "SUCCESS Step 3 | Time: 1.00s | Loss: 0.5000 | Peak Mem.: 45.1/80.0 GiB (56.4%)\n"
    assert steps(line)[3]["peak_mem"] == 45.1


def test_the_orchestrators_own_end_finishes_the_run():
    text = ORCHESTRATOR + "02:40:00    INFO Writing final checkpoint\n02:40:01 SUCCESS Orchestrator finished.\n"
    assert ends(text) == 1
    assert run_state(model(text), []) is RunState.FINISHED


def test_waiting_for_the_trainer_is_no_step():
    line = ("00:27:06    INFO Orchestrator paused: waiting for trainer process to complete checkpoint 9 "
            "(>1 step(s) ahead). Training is progressing normally.\n")
    assert steps(line) == {}


# prime-rl's later orchestrator through the hosted `prime train` CLI (PrimeIntellect-ai/prime#784):
# the level in brackets, no colons, the step's time unnamed.
CLI = ("18:15:09 [SUCCESS] Step 2 |    9.5s | Reward 0.1972 | Trainable 16/16 (100.0%) | Turns 1.0 | "
       "Branches 1.0 | Max Off-Policy 0 | Error 0.0% | Truncation 0.0%\n")


def test_the_later_orchestrators_items_are_a_name_then_a_number():
    assert steps(CLI) == {2: {"step_time": 9.5, "reward": 0.1972, "trainable": 16.0, "turns": 1.0,
                              "branches": 1.0, "max_off-policy": 0.0, "error": 0.0, "truncation": 0.0}}


def test_its_unnamed_time_is_read_in_minutes_and_hours_too():
    line = CLI.replace("[SUCCESS] Step 2 |    9.5s |", "SUCCESS Train step 7 | 1h 15m 56s |")
    assert steps(line)[7]["step_time"] == 4556.0
    assert steps(CLI.replace("   9.5s", "15m 56s"))[2]["step_time"] == 956.0


def test_a_named_item_that_is_not_a_duration_is_no_time():
    assert "step_time" not in steps(CLI.replace("   9.5s", "Turns 3"))[2]


def test_an_evaluation_line_is_no_step():
    line = ("18:15:19 [SUCCESS] Eval step 2 (gsm8k) | 12.1s | Reward 0.5100 | Error 0.0% | "
            "Valid 16/16 (100.0%) | Max Off-Policy 1\n")
    assert steps(line) == {}
