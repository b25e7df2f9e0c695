"""``rlwatch rules``: print the health rules in force, after the user's overrides."""

from __future__ import annotations

import sys

from tui.cli import exit_codes
from tui.rules.rule_file import RuleFileError, RuleSpec, load_rules, override_paths


def describe(rule: RuleSpec) -> str:
    """One rule as a reader wants it: id, state, kind, numbers, what it reads, why."""
    numbers = ", ".join(f"{name}={value}" for name, value in rule.params.items() if _worth_showing(value))
    state = ("" if rule.enabled else " (disabled)") + (" (muted)" if rule.muted else "")
    lines = [f"{rule.id}{state}  [{rule.severity}, {rule.kind}{', ' + numbers if numbers else ''}"
             f"{f', warm-up {rule.warmup} steps' if rule.warmup else ''}]"]
    if rule.metrics:
        lines.append(f"    reads: {', '.join(rule.metrics)}")
    for unless in rule.unless:
        lines.append(f"    not judged where the run's config has {unless.config}={unless.equals}: {unless.why}")
    lines.append(f"    why: {rule.explain} (source: {rule.source})")
    return "\n".join(lines)


def _worth_showing(value: object) -> bool:
    """Unset options (None, empty lists, zero minimums, off switches) are noise in the listing."""
    if value is None or value is False or value == []:
        return False
    return not (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0)


def run_rules(rules_file: str | None, mute: str | None = None) -> int:
    """Entry point for ``rlwatch rules``; ``mute``: ``--mute RULE[,RULE…]``, so a user can see
    what a check with the same ``--mute`` would judge with (and learn of a misspelt id before
    a night's watching)."""
    paths = override_paths(rules_file)
    try:
        rules = load_rules(*paths, mute=mute)
    except RuleFileError as error:
        print(f"rlwatch: {error}", file=sys.stderr)
        return exit_codes.UNREADABLE
    sources = ", ".join(["defaults", *map(str, paths)])
    print(f"# {len(rules)} rules from {sources}\n")
    print("\n".join(describe(rule) for rule in rules))
    return exit_codes.OK
