"""Exit statuses, as monitoring plugins (Nagios, Icinga) define them."""

from __future__ import annotations

from tui.rules.findings import Severity

OK = 0
WARNING = 1
CRITICAL = 2
UNREADABLE = 3


def for_worst(severity: Severity | None) -> int:
    """The status for a run whose worst finding is ``severity`` (None: no finding)."""
    return {None: OK, Severity.WARNING: WARNING, Severity.CRITICAL: CRITICAL}[severity]
