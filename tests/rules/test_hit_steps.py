"""Each grouped finding keeps the step of every hit, so a step can be asked which rules it broke."""

from tests.support import findings_of, model_of


def test_a_grouped_finding_knows_each_step_it_hit():
    found = findings_of(model_of("032"))
    kl_high = found["kl-high"][0]
    assert len(kl_high.steps) == kl_high.count
    assert list(kl_high.steps) == sorted(kl_high.steps)
    assert kl_high.steps[0] == kl_high.first_step and kl_high.steps[-1] == kl_high.last_step
    assert kl_high.hit_at(34) and not kl_high.hit_at(1)  # KL starts below 0.03
    gap = found["val-gap"][0]  # a relation rule: hits only at validation steps
    assert gap.hit_at(30) and not gap.hit_at(31)
