"""The verdict page's rule table (docs/verdict.md) lists every default rule at its level, so the
docs cannot drift."""

from tests.corpus import REPO
from tui.rules.rule_file import load_rules


def test_every_default_rule_is_in_the_verdict_page_table_with_its_level():
    rows = {line.split("|")[1].strip(" `"): line.split("|")[2].strip()
            for line in (REPO / "docs" / "verdict.md").read_text().splitlines()
            if line.startswith("| `")}
    for rule in load_rules():
        assert rows.get(rule.id) == rule.severity, rule.id
