"""slime's (and Miles') timer lines name the part of the step they time: ``Timer {name} start``
and ``Timer {name} end (elapsed: {seconds:.1f}s)``, as slime's ``Timer`` prints them (print
from 2025-10-30, its logger since 2025-11-17: THUDM/slime ``slime/utils/timer.py``, now
``slime/observability/timer.py``; Miles' ``miles/utils/timer.py``), behind slime's logger header
and Ray's actor prefix; THUDM/slime issue #1487's line as the user quoted it
(tests/fixtures/logs/kin/slime1487_…). A sentence about a timer names nothing."""

from __future__ import annotations

import pytest

from tui.parsers.records import PhaseRecord
from tui.parsers.stall_evidence import (
    CHECKPOINT,
    ROLLOUT,
    TIMED,
    TIMER_ENDED,
    TRAINING,
    VALIDATION,
    WEIGHT_SYNC,
    match_phase,
)

TRAINER = "(MegatronTrainRayActor pid=1234) "
HEADER = "[2025-11-20 10:00:00] timer.py:24 - "  # slime's logger (slime/observability/logging_utils.py)

# (the timer's name, the phase its start names)
TIMERS = [
    ("train_wait", ROLLOUT),  # the trainer waits for the rollout's data
    ("data_preprocess", TRAINING),
    ("train", TRAINING),
    ("ref_log_probs", TRAINING),  # {store_prefix}log_probs: "ref_", "teacher_", ""
    ("teacher_log_probs", TRAINING),
    ("log_probs", TRAINING),
    ("actor_train", TRAINING),
    ("critic_train", TRAINING),  # Miles
    ("ref_model_update", TRAINING),
    ("update_weights", WEIGHT_SYNC),
    ("update_weights_implementation", WEIGHT_SYNC),  # Miles
    ("save_model", CHECKPOINT),
    ("export_hf", CHECKPOINT),  # Miles
    ("eval_rollout", VALIDATION),  # Miles' rollout manager
    ("wake_up", TIMED),  # the trainer's memory brought back (offload): no phase of its own
    ("my_reward_cache", TIMED),  # a user's own timer
]


@pytest.mark.parametrize(("name", "kind"), TIMERS)
def test_a_timer_that_starts_names_its_phase_and_the_record_carries_its_name(name: str, kind: str):
    record = match_phase(f"{TRAINER}{HEADER}Timer {name} start", 7)
    assert record == PhaseRecord(kind, f"Timer {name} start", 7, TRAINER.strip(), timer=name)


def test_a_timer_that_ends_says_its_phase_ended():
    record = match_phase(f"{TRAINER}{HEADER}Timer update_weights end (elapsed: 12.3s)", 0)
    assert record is not None and record.kind == TIMER_ENDED and record.timer == "update_weights"
    assert record.text == "Timer update_weights end (elapsed: 12.3s)"


@pytest.mark.parametrize("line", [
    "Timer actor_train start",  # printed (slime 2025-10-30 to 2025-11-17)
    "(MegatronTrainRayActor pid=77) Timer actor_train start",
    "[2026-01-23 17:02:54] Timer actor_train start",  # issue #1487, the logger's file:line left out
    "[2026-08-22 10:00:00.123 actor_cell0_rank0] timer.py:31 - Timer actor_train start",  # Miles' header
    # an actor's and a critic's rank 0 print it alike: Ray merges them
    f"{TRAINER}{HEADER}Timer actor_train start [repeated 2x across cluster]",
])
def test_each_form_of_the_line_is_read(line: str):
    record = match_phase(line, 0)
    assert record is not None and record.kind == TRAINING and record.text == "Timer actor_train start"


@pytest.mark.parametrize("line", [
    "the model said: Timer train start",
    "Timer train start now, please",
    "AssertionError: Timer train_wait already started.",  # slime's own assertion
    "Timer train_wait end (elapsed: soon)",
    f"{TRAINER}{HEADER}Timer update weights start",  # a name is one word
])
def test_talk_of_a_timer_is_no_phase(line: str):
    assert match_phase(line, 0) is None
