"""``rlwatch rules``: the rules in force, as a check with the same options would judge with."""

from __future__ import annotations

from tests.support import rlwatch


def test_every_default_rule_is_listed_with_why_and_where_it_comes_from():
    done = rlwatch("rules")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("# ") and "rules from defaults" in done.stdout.splitlines()[0]
    assert "\nstep-time  [" in done.stdout and "    why: " in done.stdout


def test_mute_shows_the_rules_it_names_as_muted_and_no_others():
    done = rlwatch("rules", "--mute", "step-time,loss-nan")
    assert done.returncode == 0
    muted = [line.split()[0] for line in done.stdout.splitlines() if "(muted)" in line]
    assert sorted(muted) == ["loss-nan", "step-time"]


def test_a_misspelt_rule_to_mute_is_named_in_one_line():
    done = rlwatch("rules", "--mute", "step-tme")
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "no rule named 'step-tme' to mute" in done.stderr
