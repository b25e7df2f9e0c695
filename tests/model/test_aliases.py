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


def test_kl_is_the_kl_to_the_reference_never_the_ppo_update_size():
    from tui.model.aliases import KL
    from tui.model.series import Series

    def series(*values):
        out = Series()
        for step, value in enumerate(values, 1):
            out.set(step, value)
        return out

    # PPO with the KL in the reward (older verl): critic/kl, not actor/ppo_kl.
    assert KL.resolve({"actor/ppo_kl": series(0.0), "critic/kl": series(0.15)}) == "critic/kl"
    assert KL.resolve({"actor/ppo_kl": series(0.001)}) is None
    # Today's verl prints actor/kl_loss:0.0 on every step when use_kl_loss is off.
    assert KL.resolve({"actor/kl_loss": series(0.0, 0.0),
                       "actor/reward_kl_penalty": series(0.02, 0.03)}) == "actor/reward_kl_penalty"
    # With use_kl_loss on, the KL loss is the KL to the reference.
    assert KL.resolve({"actor/kl_loss": series(0.01, 0.02),
                       "actor/reward_kl_penalty": series(0.0, 0.0)}) == "actor/kl_loss"
    # A KL loss that is still zero and nothing else: that is the KL.
    assert KL.resolve({"actor/kl_loss": series(0.0)}) == "actor/kl_loss"


def test_validation_sources_name_each_data_set_a_run_scores_on_apart():
    """Corpus 034 validates on MATH and GSM8K; the source may hold "/", val-aux is not a score."""
    from tui.model.aliases import validation_sources

    keys = {"val-core/openai/gsm8k/reward/mean@1", "val-core/DigitalLearningGmbH/MATH-lighteval/reward/mean@1",
            "val-aux/openai/gsm8k/acc/mean@1", "critic/score/mean"}
    sources = validation_sources(keys)
    assert sources == {"DigitalLearningGmbH/MATH-lighteval":
                       "val-core/DigitalLearningGmbH/MATH-lighteval/reward/mean@1",
                       "openai/gsm8k": "val-core/openai/gsm8k/reward/mean@1"}
    # The panel's own key (VALIDATION's pick) is its first source's.
    assert next(iter(sources.values())) == VALIDATION.resolve(keys)
    assert validation_sources({"val/test_score/openai/gsm8k", "test_score/math", "eval/aime"}) == {
        "aime": "eval/aime", "openai/gsm8k": "val/test_score/openai/gsm8k", "math": "test_score/math"}
    # An overall score (SkyRL's) and a single score key are no data source.
    assert validation_sources({"val/reward_score", "eval/all/avg_score", "actor/pg_loss"}) == {}
