"""Each grouped finding keeps the step of every hit, so a step can be asked which rules it broke."""

from tests.support import findings_of, model_of
from tui.rules.findings import Finding, Severity


def test_a_grouped_finding_knows_each_step_it_hit():
    found = findings_of(model_of("032"))
    kl_high = found["kl-high"][0]
    assert len(kl_high.steps) == kl_high.count
    assert list(kl_high.steps) == sorted(kl_high.steps)
    assert kl_high.steps[0] == kl_high.first_step and kl_high.steps[-1] == kl_high.last_step
    assert kl_high.hit_at(34) and not kl_high.hit_at(1)  # KL starts below 0.03
    gap = found["val-gap"][0]  # a relation rule: hits only at validation steps
    assert gap.hit_at(30) and not gap.hit_at(31)


def test_hits_folded_at_once_group_as_one_by_one():
    one_by_one, at_once = Finding("r", Severity.WARNING, "m"), Finding("r", Severity.WARNING, "m")
    for step in (3, 5):
        one_by_one.add_hit(step, 0.1, "earlier", "why")
    one_by_one.add_hit(9, 0.7, "last", "because")
    at_once.add_hit(3, 0.1, "earlier", "why")
    at_once.add_hits([5, 9], 0.7, "last", "because")
    assert at_once == one_by_one and list(at_once.steps) == [3, 5, 9]
