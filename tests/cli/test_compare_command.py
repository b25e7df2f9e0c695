"""``rlwatch compare A B …``: its arguments and the runs it cannot read (the screen itself is
tested with the pilot in tests/ui/screens/test_compare.py, and in tmux in tests/e2e)."""

from __future__ import annotations

from tests.corpus import verl_log
from tests.support import rlwatch


def test_one_run_is_nothing_to_compare():
    done = rlwatch("compare", str(verl_log("034")))
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr == "rlwatch compare: name two or more runs to compare (rlwatch compare RUN_A RUN_B …)\n"


def test_a_run_that_cannot_be_read_fails_in_one_line_before_the_screen_opens(tmp_path):
    missing = tmp_path / "no-such-run"
    done = rlwatch("compare", str(verl_log("034")), str(missing))
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.startswith("rlwatch: ") and done.stderr.count("\n") == 1
    assert str(missing) in done.stderr and "Traceback" not in done.stderr


def test_the_command_is_listed_and_takes_the_dashboards_options():
    assert "rlwatch compare A B" in rlwatch("--help").stdout
    usage = rlwatch("compare", "--help").stdout
    for option in ("--rules", "--log", "--theme", "--ascii", "--accept-new-host-key"):
        assert option in usage
    done = rlwatch("compare", str(verl_log("034")), str(verl_log("035")), "--theme", "no-such-theme")
    assert done.returncode == 3 and "no-such-theme" in done.stderr and "Traceback" not in done.stderr


def test_mute_is_taken_and_a_misspelt_rule_fails_before_the_screen_opens():
    """``--mute`` means what it means to check: a rule id no rule has is a typo, said at once."""
    assert "--mute" in rlwatch("compare", "--help").stdout
    done = rlwatch("compare", str(verl_log("034")), str(verl_log("035")), "--mute", "step-tme")
    assert done.returncode == 3 and done.stdout == ""
    assert "no rule named 'step-tme' to mute" in done.stderr and done.stderr.count("\n") == 1
