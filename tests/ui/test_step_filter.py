"""The steps filter's words on a real run's findings: ``crit`` means critical, not the metric
``critic/score/mean`` that every verl run logs; rules, metrics, ranges and values narrow."""

from __future__ import annotations

from tests.support import NOW, model_of
from tui.rules.engine import RuleEngine
from tui.rules.findings import Severity
from tui.rules.rule_file import load_rules
from tui.ui.step_filter import filter_steps, parse_query


def judged(prefix: str):
    model = model_of(prefix, NOW)
    return model, RuleEngine(load_rules()).evaluate(model, NOW)


def kept(prefix: str, query: str) -> list[int]:
    model, findings = judged(prefix)
    return list(filter_steps(parse_query(query), findings, model.every_step(), model.series))


def test_crit_keeps_critical_steps_only_not_warnings_on_critic_metrics():
    model, findings = judged("032")  # a real GRPO run: warnings only, one on critic/score/mean
    assert any(f.metric == "critic/score/mean" for f in findings)
    assert kept("032", "crit") == [] == kept("032", "sev:critical")
    warned = sorted({s for f in findings if f.severity == Severity.WARNING for s in f.steps})
    assert kept("032", "warn") == warned == kept("032", "sev:warning")
    nan_run, nan_findings = judged("036")  # a real run whose loss went nan at its one step
    assert kept("036", "crit") == [nan_run.last_step]


def test_words_of_one_kind_widen_and_of_two_kinds_narrow():
    model, findings = judged("032")
    reward = next(f for f in findings if f.rule == "reward-falling")
    assert kept("032", "rule:reward-falling") == sorted(set(reward.steps))
    assert kept("032", "metric:score/mean") == sorted(set(reward.steps))
    inside = [s for s in reward.steps if 500 <= s <= 900]
    assert inside and kept("032", "rule:reward-falling 500-900") == sorted(set(inside))
    grads = {s for f in findings if f.rule == "grad-high" for s in f.steps}
    assert kept("032", "rule:reward rule:grad") == sorted(set(reward.steps) | grads)
    assert kept("032", "362") == [362] and kept("032", "900-500") == list(range(500, 901))


def test_ok_keeps_the_steps_that_broke_no_rule_and_free_text_reads_values():
    model, findings = judged("032")
    broken = {s for f in findings for s in f.steps}
    assert kept("032", "ok") == [s for s in model.every_step() if s not in broken]
    value = model.series["actor/pg_loss"].values[361]  # step 362's policy loss, as logged
    assert 362 in kept("032", repr(value))
    nan_run, _ = judged("036")
    assert kept("036", "nan") == [nan_run.last_step]  # the nan the run's loss went to
    assert kept("032", "no-such-thing") == []


def test_a_severity_of_no_known_word_is_said_not_guessed():
    query = parse_query("sev:bad crit")
    assert query.problems == ("sev:bad",) and query.severities == {Severity.CRITICAL}
    assert parse_query("  ").empty and not parse_query("CRIT").empty


def test_note_is_a_severity_word_not_free_text():
    assert parse_query("note").severities == frozenset({Severity.NOTE})
    assert parse_query("sev:note").severities == frozenset({Severity.NOTE})
