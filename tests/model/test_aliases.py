"""Concepts resolve to the newest key a run has."""

from tui.model.aliases import ENTROPY, POLICY_LOSS, VALIDATION


def test_newest_name_wins_when_both_exist():
    assert ENTROPY.resolve({"actor/entropy_loss", "actor/entropy"}) == "actor/entropy"
    assert ENTROPY.resolve({"actor/entropy_loss"}) == "actor/entropy_loss"
    assert POLICY_LOSS.resolve({"actor/loss"}) == "actor/loss"


def test_validation_keys_of_every_version():
    assert VALIDATION.resolve({"val-core/openai/gsm8k/acc/mean@1", "val-aux/openai/gsm8k/reward/mean@1"}) \
        == "val-core/openai/gsm8k/acc/mean@1"
    assert VALIDATION.resolve({"val/test_score/openai/gsm8k"}) == "val/test_score/openai/gsm8k"
    assert VALIDATION.resolve({"test_score/openai/gsm8k"}) == "test_score/openai/gsm8k"
    assert VALIDATION.resolve({"val-core/x/acc/best@4/mean", "critic/score/mean"}) is None
