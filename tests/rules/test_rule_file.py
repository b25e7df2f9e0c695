"""Rule files: the defaults encode the checklist; overrides and broken files."""

import subprocess
import sys

import pytest

from tui.rules.rule_file import RuleFileError, apply_overrides, load_rules, parse_rules

CHECKLIST_RULES = {"reward-falling", "reward-stuck", "val-gap", "val-falling", "loss-jump",
                   "loss-nan", "kl-high", "entropy-low", "entropy-collapse", "grad-high",
                   "grad-spike", "adv-zero", "clipfrac", "length-jump", "step-time",
                   "memory-jump", "stalled", "crash"}


def test_defaults_cover_the_checklist_with_sources_and_explanations():
    rules = {rule.id: rule for rule in load_rules()}
    assert CHECKLIST_RULES <= set(rules)
    for rule in rules.values():
        assert rule.explain and rule.source, rule.id
    assert rules["kl-high"].params["high"] == 0.03
    assert rules["loss-nan"].severity == "critical" and rules["entropy-low"].severity == "warning"


def test_an_override_changes_only_what_it_names(tmp_path):
    override = tmp_path / "rules.toml"
    override.write_text('[[rule]]\nid = "kl-high"\nhigh = 0.05\n\n[[rule]]\nid = "clipfrac"\nenabled = false\n')
    rules = {rule.id: rule for rule in load_rules(override)}
    assert rules["kl-high"].params["high"] == 0.05 and rules["kl-high"].severity == "warning"
    assert rules["clipfrac"].enabled is False


def test_a_new_rule_can_be_added():
    rules = apply_overrides(load_rules(), '[[rule]]\nid = "lr-high"\nkind = "band"\nseverity = "warning"\n'
                            'metrics = ["actor/lr"]\nhigh = 1e-4\nexplain = "LR too high."\n', "mine")
    assert rules[-1].id == "lr-high" and rules[-1].params == {"low": None, "high": 1e-4, "settle": 20}


@pytest.mark.parametrize(("text", "message"), [
    ('[[rule]]\nid = "x"\nkind = "band"\n', "mine.toml:1: rule 'x' is new and needs 'severity'"),
    ('# c\n\n[[rule]]\nid = "kl-high"\nhigh = "a lot"\n', "mine.toml:3: rule 'kl-high': 'high' must be int or float"),
    ('[[rule]]\nid = "kl-high"\nhigh = 1\n[[rule]]\nid = "kl-high"\nwindow = 3\n',
     "mine.toml:4: rule 'kl-high': unknown field 'window'"),
    ('[[rule]]\nid = "y"\nkind = "wobble"\nseverity = "warning"\nmetrics = ["a"]\nexplain = "e"\n',
     "unknown kind 'wobble'"),
    ('[[rule]]\nid = "kl-high"\nseverity = "meh"\n', "severity must be 'warning' or 'critical'"),
    ('[[rule]\nid = 1\n', "mine.toml: "),
    ('[[rule]]\nid = "grad-spike"\ndirection = "sideways"\n', "direction must be one of"),
    ('[[rule]]\nid = "grad-spike"\nwindow = 0\n', "rule 'grad-spike': window counts steps: 1 or more, not 0"),
    ('[[rule]]\nid = "reward-stuck"\nsteps = -2\n', "steps counts steps: 1 or more, not -2"),
])
def test_broken_files_name_file_line_and_problem(text, message):
    with pytest.raises(RuleFileError) as caught:
        apply_overrides(load_rules(), text, "mine.toml")
    assert message in str(caught.value)


@pytest.mark.parametrize(("rule", "field", "value", "said"), [
    ("kl-high", "high", "nan", "a finite number, not nan"),
    ("entropy-low", "low", "inf", "a finite number, not inf"),
    ("entropy-low", "low", "-inf", "a finite number, not -inf"),
    ("stalled", "quiet_seconds", "-1", "more than 0 seconds, not -1"),
    ("stalled", "factor", "0.5", "1 or more (a multiple of the typical step time), not 0.5"),
    ("stalled", "min_seconds", "-3.0", "0 or more seconds, not -3.0"),
    ("stalled", "max_seconds", "0", "more than 0 seconds, not 0"),
    ("stalled", "phase_factor", "0.5", "1 or more (a multiple of a phase's slowest time), not 0.5"),
    ("gpu-memory-jump", "window_s", "-300", "more than 0 seconds, not -300"),
    ("gpu-memory-jump", "mem_jump_mib", "0", "more than 0 MiB, not 0"),
    ("gpu-memory-limit", "mem_fraction", "1.5", "more than 0 and at most 1 (a fraction of the memory), not 1.5"),
    ("gpu-idle", "util_below", "-5", "a percentage: more than 0, at most 100, not -5"),
    ("grad-spike", "ratio", "0.5", "more than 1 (a multiple of the recent median), not 0.5"),
    ("grad-spike", "floor", "nan", "a finite number, not nan"),
    ("loss-jump", "delta", "-0.5", "more than 0, not -0.5"),
    ("val-gap", "max_gap", "-0.2", "0 or more, not -0.2"),
    ("reward-falling", "min_change", "-1", "0 or more, not -1"),
])
def test_a_number_outside_its_meaning_names_file_rule_and_field(rule, field, value, said):
    text = f'# mine\n[[rule]]\nid = "{rule}"\n{field} = {value}\n'
    with pytest.raises(RuleFileError) as caught:
        apply_overrides(load_rules(), text, "mine.toml")
    assert str(caught.value) == f"mine.toml:2: rule {rule!r}: '{field}' must be {said}"


def test_a_band_whose_low_is_not_below_its_high_is_refused():
    with pytest.raises(RuleFileError, match=r"mine.toml:1: rule 'clipfrac': low \(0.5\) must be below high \(0.3\)"):
        apply_overrides(load_rules(), '[[rule]]\nid = "clipfrac"\nlow = 0.5\n', "mine.toml")


def test_a_stall_ceiling_below_its_floor_is_refused():
    with pytest.raises(RuleFileError, match=r"mine.toml:1: rule 'stalled': max_seconds \(300\) must not be "
                                            r"below min_seconds \(600\)"):
        apply_overrides(load_rules(), '[[rule]]\nid = "stalled"\nmax_seconds = 300\n', "mine.toml")


def test_a_complete_file_must_define_whole_rules():
    with pytest.raises(RuleFileError, match="needs at least one metric"):
        parse_rules('[[rule]]\nid = "b"\nkind = "band"\nseverity = "warning"\nmetrics = []\n'
                    'high = 1\nexplain = "e"\n', "f")


def test_rules_command_prints_the_active_rules(tmp_path):
    override = tmp_path / "r.toml"
    override.write_text('[[rule]]\nid = "kl-high"\nhigh = 0.05\n')
    done = subprocess.run([sys.executable, "-m", "tui", "rules", "--rules", str(override)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "kl-high  [warning, band, high=0.05, settle=20]" in done.stdout
    # Sources by their public titles, never this project's own numbering ("seed 000").
    assert "an RL evaluation checklist for verl" in done.stdout and str(override) in done.stdout
    assert "seed" not in done.stdout.lower() and "source: 000" not in done.stdout


def test_rules_command_reports_a_broken_file_in_one_line(tmp_path):
    broken = tmp_path / "r.toml"
    broken.write_text('[[rule]]\nid = "kl-high"\nhigh = "x"\n')
    done = subprocess.run([sys.executable, "-m", "tui", "rules", "--rules", str(broken)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert f"{broken}:1: rule 'kl-high'" in done.stderr
