"""What a broken rule reports: one grouped finding per rule and metric."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from enum import Enum

from tui.parsers.records import Where
from tui.parsers.values import format_value

class Severity(str, Enum):
    """How bad a finding is. The values are the words ``check --json`` and the rule files use.

    A rule is a warning or a critical; the engine says a finding of a warning rule is a
    ``NOTE`` where it is no news: a checklist band the run has sat outside of for long (a
    property of this run), a condition that has cleared, a band that cannot apply to this
    run. A note is shown, never counted (see ``Finding.counts``).
    """

    NOTE = "note"
    WARNING = "warning"
    CRITICAL = "critical"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


@dataclass(slots=True)
class Finding:
    """Every hit of one rule on one metric, grouped: first and last step and a count.

    A healthy run sits outside some checklist bands for hundreds of steps;
    grouping keeps that to one line instead of a flood. A finding is made empty,
    ``Finding(rule, severity, metric)``, and every hit goes through ``add_hit``:
    the step range, count, value and message are only ever what the hits say.
    """

    rule: str
    severity: Severity
    metric: str | None = None
    # A failure's exception line and the byte offset of its block in the log
    # (crash and error findings), so a user can go straight to it.
    exception: str | None = None
    offset: int | None = None
    # Where the failure happened (rank, local rank, host, pid), where the log says it.
    where: Where | None = None
    first_step: int | None = field(default=None, init=False)
    last_step: int | None = field(default=None, init=False)
    count: int = field(default=0, init=False)
    value: float | str | None = field(default=None, init=False)
    message: str = field(default="", init=False)
    # The short why of the latest hit ("above 0.03"), for a panel title.
    reason: str = field(default="", init=False)
    # The step of every hit, ascending (the engine judges each series in step
    # order), so the steps table and the step detail can tell which rules a
    # given step broke; 8 bytes a hit.
    steps: array[int] = field(default_factory=lambda: array("q"), init=False, repr=False, compare=False)
    # Why the engine made this a note, and the step the standing condition began (if any).
    note: str = field(default="", init=False, compare=False)
    since: int | None = field(default=None, init=False, compare=False)
    # The user acknowledged the finding (the dashboard's key, ``--mute``, a rule file's
    # ``mute``): shown as muted, never counted.
    muted: bool = field(default=False, init=False, compare=False)

    @property
    def counts(self) -> bool:
        """Whether this finding sets the run's state, the status line and the exit code."""
        return not self.muted and self.severity != Severity.NOTE

    def add_hit(self, step: int | None, value: float | str | None, message: str,
                reason: str = "") -> None:
        """Fold one more hit into the group (one with no step counts, without a step)."""
        if step is not None:
            self.add_hits([step], value, message, reason)
        else:
            self.count += 1
            self.value, self.message, self.reason = value, message, reason

    def add_hits(self, steps: list[int], value: float | str | None, message: str,
                 reason: str = "") -> None:
        """Fold hits at ``steps`` (ascending, as the engine judges a series) into the group;
        ``value``, ``message`` and ``reason`` are the last's."""
        first, last = min(steps), max(steps)
        self.first_step = first if self.first_step is None else min(self.first_step, first)
        self.last_step = last if self.last_step is None else max(self.last_step, last)
        self.count += len(steps)
        self.value, self.message, self.reason = value, message, reason
        self.steps.extend(steps)

    def hit_at(self, step: int) -> bool:
        """Whether one of the grouped hits was at ``step``."""
        at = bisect_left(self.steps, step)
        return at < len(self.steps) and self.steps[at] == step

    def to_json(self) -> dict[str, object]:
        """The ``check --json`` form of the finding (a contract)."""
        value = format_value(self.value) if isinstance(self.value, float) else self.value
        out: dict[str, object] = {"rule": self.rule, "severity": self.severity.value, "metric": self.metric,
               "first_step": self.first_step, "last_step": self.last_step, "count": self.count,
               "value": value, "message": self.message}
        if self.exception is not None:
            out["exception"] = self.exception
        if self.offset is not None:
            out["offset"] = self.offset
        if self.where is not None:
            out.update({name: value for name, value in (
                ("rank", self.where.rank), ("local_rank", self.where.local_rank),
                ("host", self.where.host or None), ("pid", self.where.pid)) if value is not None})
        if self.note:
            out["note"] = self.note
        if self.since is not None:
            out["since"] = self.since
        out["muted"] = self.muted
        return out

    def said(self) -> str:
        """The message with the engine's note after it (what the text outputs print)."""
        muted = " (muted)" if self.muted else ""
        return (f"{self.message}; {self.note}" if self.note and self.message else
                self.note or self.message) + muted


def worst_severity(findings: list[Finding]) -> Severity | None:
    """Critical if any counted finding is, else warning if any, else None (notes and
    muted findings do not count)."""
    severities = {finding.severity for finding in findings if finding.counts}
    if Severity.CRITICAL in severities:
        return Severity.CRITICAL
    return Severity.WARNING if severities else None
