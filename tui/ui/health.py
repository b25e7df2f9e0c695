"""Which findings a panel, the header or a step shows: pure helpers over the rule engine's findings.

A panel's state is about *now*: a finding counts for it when it is on the
panel's metric and its last hit is the metric's newest point. Findings from
earlier in the run stay in the findings list (``f``) but do not colour the
panel forever.
"""

from __future__ import annotations

from tui.model.series import Series
from tui.rules.findings import Finding, Severity

# Shown with the colour, so the state reads without it (colour-blind users, NO_COLOR).
STATE_MARK = {Severity.CRITICAL: "✖ CRIT", Severity.WARNING: "▲ WARN", Severity.NOTE: "· note",
              None: "✓ ok"}
# A muted finding's mark in the findings list (its level still said beside it).
MUTED_MARK = "– muted"


def level_style(finding: Finding) -> str:
    """The colour a finding's mark is drawn in: red and bold for a critical, the warning
    colour for a warning, muted for a note or a muted finding (said, not counted)."""
    if not finding.counts:
        return "$text-muted"
    return "bold $error" if finding.severity == Severity.CRITICAL else "$warning"


def active_on(findings: list[Finding], key: str | None, series: Series | None) -> list[Finding]:
    """Counted findings on ``key`` whose last hit is the series' newest step, worst first (a
    note — a band the run has long sat outside of — or a muted finding colours no panel)."""
    if key is None or series is None or not len(series):
        return []
    newest = series.steps[-1]
    hits = [f for f in findings if f.metric == key and f.last_step == newest and f.counts]
    return sorted(hits, key=lambda f: f.severity != Severity.CRITICAL)


def crash_of(findings: list[Finding]) -> Finding | None:
    """The crash that ended the run (a critical finding with its exception line), if any."""
    return next((f for f in findings if f.severity == Severity.CRITICAL and f.exception), None)


def failure_words(finding: Finding) -> str:
    """A failure's exception line behind the rank it happened on, when the log says it (``rank
    1 on node07: RuntimeError: boom``): on a run of many ranks, which one is half the news. (A
    Ray worker's pid and node stay in the finding's message and JSON.)"""
    said = finding.exception or ""
    where = finding.where
    return f"{where.words()}: {said}" if where and (where.rank, where.local_rank) != (None, None) else said


def run_state(findings: list[Finding]) -> tuple[Severity | None, str]:
    """The header's one-line verdict: worst severity now, and what to say. Notes and muted
    findings are in the findings list, not here."""
    counted = [f for f in findings if f.counts]
    critical = [f for f in counted if f.severity == Severity.CRITICAL]
    crash = crash_of(counted)
    if crash is not None:
        others = len(dict.fromkeys(f.rule for f in critical)) - 1
        return Severity.CRITICAL, f"crashed: {failure_words(crash)}" + (f" (+{others} critical)" if others else "")
    if critical:
        names = list(dict.fromkeys(f.rule for f in critical))
        if names == ["stalled"]:  # the state word and how long, as the stall rule words it
            return Severity.CRITICAL, f"stalled: {critical[0].message.split(';')[0]}"
        return Severity.CRITICAL, f"critical: {', '.join(names)}"
    warnings = sum(1 for f in counted if f.severity == Severity.WARNING)
    if warnings:
        return Severity.WARNING, f"{warnings} warning{'s' if warnings != 1 else ''}"
    aside = len(findings)
    return None, "all rules hold" + (f" ({aside} noted in f)" if aside else "")


def worst_finding(findings: list[Finding]) -> Finding | None:
    """The finding the header's verdict names: the crash, else the newest critical, else
    the newest warning (None: every rule holds). ``w`` and the findings' cursor start here."""
    newest = sorted(findings, key=lambda f: f.last_step if f.last_step is not None else -1,
                    reverse=True)
    for wanted in (lambda f: f.rule == "crash" and f.exception,
                   lambda f: f.severity == Severity.CRITICAL, lambda f: True):
        found = next((f for f in newest if wanted(f)), None)
        if found is not None:
            return found
    return None


def hits_at(findings: list[Finding], step: int) -> list[Finding]:
    """Findings with a hit at ``step`` (the rules that step broke), worst first: counted
    before muted, then critical, warning, note."""
    hits = [f for f in findings if f.hit_at(step)]
    return sorted(hits, key=lambda f: (not f.counts, _LEVEL_RANK[f.severity]))


_LEVEL_RANK = {Severity.CRITICAL: 0, Severity.WARNING: 1, Severity.NOTE: 2}
