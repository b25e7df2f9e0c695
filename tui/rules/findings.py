"""What a broken rule reports: one grouped finding per rule and metric."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass, field

from tui.parsers.values import format_value

WARNING = "warning"
CRITICAL = "critical"
SEVERITIES = (WARNING, CRITICAL)


@dataclass(slots=True)
class Finding:
    """Every hit of one rule on one metric, grouped: first and last step and a count.

    A healthy run sits outside some checklist bands for hundreds of steps;
    grouping keeps that to one line instead of a flood.
    """

    rule: str
    severity: str
    metric: str | None
    first_step: int | None
    last_step: int | None
    count: int
    value: float | str | None
    message: str
    # The short why of the latest hit ("above 0.03"), for a panel title.
    reason: str = ""
    # The step of every hit, ascending (the engine judges each series in step
    # order), so the steps table and the step detail can tell which rules a
    # given step broke; 8 bytes a hit.
    steps: array[int] = field(default_factory=lambda: array("q"), repr=False, compare=False)
    # A failure's exception line and the byte offset of its block in the log
    # (crash and error findings), so a user can go straight to it.
    exception: str | None = None
    offset: int | None = None

    def add_hit(self, step: int | None, value: float | str | None, message: str,
                reason: str = "") -> None:
        """Fold one more hit into the group."""
        if self.first_step is None or (step is not None and step < self.first_step):
            self.first_step = step
        if self.last_step is None or (step is not None and step > self.last_step):
            self.last_step = step
        self.count += 1
        self.value = value
        self.message = message
        self.reason = reason
        if step is not None:
            self.steps.append(step)

    def hit_at(self, step: int) -> bool:
        """Whether one of the grouped hits was at ``step``."""
        at = bisect_left(self.steps, step)
        return at < len(self.steps) and self.steps[at] == step

    def to_json(self) -> dict[str, object]:
        """The ``check --json`` form of the finding (a contract)."""
        value = format_value(self.value) if isinstance(self.value, float) else self.value
        out: dict[str, object] = {"rule": self.rule, "severity": self.severity, "metric": self.metric,
               "first_step": self.first_step, "last_step": self.last_step, "count": self.count,
               "value": value, "message": self.message}
        if self.exception is not None:
            out["exception"] = self.exception
        if self.offset is not None:
            out["offset"] = self.offset
        return out


def worst_severity(findings: list[Finding]) -> str | None:
    """``critical`` if any finding is, else ``warning`` if any, else None."""
    severities = {finding.severity for finding in findings}
    if CRITICAL in severities:
        return CRITICAL
    return WARNING if severities else None
