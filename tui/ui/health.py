"""Which findings a panel or the header shows: pure helpers over the rule engine's findings.

A panel's state is about *now*: a finding counts for it when it is on the
panel's metric and its last hit is the metric's newest point. Findings from
earlier in the run stay in the findings list (``f``) but do not colour the
panel forever.
"""

from __future__ import annotations

from tui.model.series import Series
from tui.rules.findings import CRITICAL, WARNING, Finding

# Shown with the colour, so the state reads without it (colour-blind users, NO_COLOR).
STATE_MARK = {CRITICAL: "✖ CRIT", WARNING: "▲ WARN", None: "✓ ok"}


def active_on(findings: list[Finding], key: str | None, series: Series | None) -> list[Finding]:
    """Findings on ``key`` whose last hit is the series' newest step, worst first."""
    if key is None or series is None or not len(series):
        return []
    newest = series.steps[-1]
    hits = [f for f in findings if f.metric == key and f.last_step == newest]
    return sorted(hits, key=lambda f: f.severity != CRITICAL)


def run_state(findings: list[Finding]) -> tuple[str | None, str]:
    """The header's one-line verdict: worst severity now, and what to say."""
    critical = [f for f in findings if f.severity == CRITICAL]
    if critical:
        names = ", ".join(dict.fromkeys(f.rule for f in critical))
        return CRITICAL, f"critical: {names}"
    warnings = sum(1 for f in findings if f.severity == WARNING)
    if warnings:
        return WARNING, f"{warnings} warning{'s' if warnings != 1 else ''}"
    return None, "all rules hold"
