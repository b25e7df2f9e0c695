"""The steps screen's ``/`` filter: a few words, each saying which steps to keep.

=================  ====================================================
``crit``, ``warn`` steps that broke a critical (a warning) rule; also
                   ``sev:crit``, ``critical``, ``sev:warning``; ``note``
                   the same for a note (a band long broken, not counted)
``ok``             steps that broke no rule
``rule:NAME``      steps that broke a rule whose id holds NAME
``metric:NAME``    steps that broke a rule on a metric whose key holds NAME
``100-200``        steps 100 to 200 (``362``: that step alone)
anything else      steps with a rule id, a broken metric's key or a value
                   holding it (``nan``, ``kl-high``, ``0.98``)
=================  ====================================================

Words of one kind widen the list (``crit warn``: either); words of different
kinds narrow it (``crit 100-200``: critical steps between 100 and 200). The
severity words are words, not parts of names: ``crit`` used to match every step
of a verl run through its metric ``critic/score/mean``. Case does not matter.
Pure, and built from the findings' hit lists and the series, so it costs the
hits and, for free text, the points, not steps × rules.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tui.model.series import Series
from tui.rules.findings import Finding, Severity

SEVERITY_WORDS = {
    "crit": Severity.CRITICAL, "critical": Severity.CRITICAL, "✖": Severity.CRITICAL,
    "warn": Severity.WARNING, "warning": Severity.WARNING, "▲": Severity.WARNING,
    "note": Severity.NOTE, "·": Severity.NOTE,
}
OK_WORDS = frozenset({"ok", "✓"})
STEP_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


@dataclass(frozen=True, slots=True)
class StepQuery:
    """What a filter line asks for (an empty field: no condition of that kind)."""

    severities: frozenset[Severity] = frozenset()
    ok: bool = False
    rules: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    ranges: tuple[tuple[int, int], ...] = ()
    words: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default=(), compare=False)  # ``sev:`` words of no severity

    @property
    def empty(self) -> bool:
        return not (self.severities or self.ok or self.rules or self.metrics or self.ranges or self.words)


def parse_query(text: str) -> StepQuery:
    """The filter line's words, sorted by kind (see the module's table)."""
    severities: set[Severity] = set()
    ok = False
    rules: list[str] = []
    metrics: list[str] = []
    ranges: list[tuple[int, int]] = []
    words: list[str] = []
    problems: list[str] = []
    for word in text.lower().split():
        kind, colon, rest = word.partition(":")
        if colon and kind in ("sev", "severity"):
            if rest in SEVERITY_WORDS:
                severities.add(SEVERITY_WORDS[rest])
            elif rest in OK_WORDS:
                ok = True
            else:
                problems.append(word)
        elif colon and kind == "rule" and rest:
            rules.append(rest)
        elif colon and kind == "metric" and rest:
            metrics.append(rest)
        elif word in SEVERITY_WORDS:
            severities.add(SEVERITY_WORDS[word])
        elif word in OK_WORDS:
            ok = True
        elif (found := STEP_RANGE.match(word)) is not None:
            low = int(found.group(1))
            high = int(found.group(2)) if found.group(2) else low
            ranges.append((min(low, high), max(low, high)))
        else:
            words.append(word)
    return StepQuery(frozenset(severities), ok, tuple(rules), tuple(metrics), tuple(ranges),
                     tuple(words), tuple(problems))


def filter_steps(query: StepQuery, findings: list[Finding], steps: array,
                 series: Mapping[str, Series]) -> array:
    """The steps (ascending, from ``steps``) the query keeps."""
    kept: set[int] | None = None  # None: no condition yet

    def narrow(chosen: Iterable[int]) -> None:
        nonlocal kept
        chosen = set(chosen)
        kept = chosen if kept is None else kept & chosen

    if query.severities or query.ok:
        chosen = {s for f in findings if f.severity in query.severities for s in f.steps}
        if query.ok:
            broken = {s for f in findings for s in f.steps}
            chosen |= {s for s in steps if s not in broken}
        narrow(chosen)
    if query.rules:
        narrow(s for f in findings if any(r in f.rule.lower() for r in query.rules) for s in f.steps)
    if query.metrics:
        narrow(s for f in findings if any(m in (f.metric or "").lower() for m in query.metrics)
               for s in f.steps)
    for word in query.words:
        narrow(_steps_saying(word, findings, series))
    shown = (s for s in steps if kept is None or s in kept)
    if query.ranges:
        shown = (s for s in shown if any(low <= s <= high for low, high in query.ranges))
    return array("q", shown)


def _steps_saying(word: str, findings: list[Finding], series: Mapping[str, Series]) -> set[int]:
    """The steps where ``word`` is in a broken rule's id or metric, or in a value as the log
    wrote it (``nan``, ``0.981``: Python's shortest form of the number)."""
    found = {s for f in findings if word in f.rule.lower() or word in (f.metric or "").lower()
             for s in f.steps}
    for one in series.values():
        found.update(step for step, value in zip(one.steps, one.values) if word in repr(value))
    return found
