"""Exit statuses, as monitoring plugins (Nagios, Icinga) define them.

Every command exits with these, not only ``check``: a script or a monitoring system reads
2 as critical, so nothing else may exit 2 (argparse's status for a bad argument) or 1. A
command line that cannot be run is UNKNOWN, as the plugin guidelines say of invalid
arguments: 3, like a target that cannot be read; so is a file that cannot be written.
"""

from __future__ import annotations

from tui.rules.findings import Severity

OK = 0
WARNING = 1
CRITICAL = 2
UNREADABLE = 3
USAGE = 3  # invalid arguments: UNKNOWN (see above); 2 would read as critical
CANNOT_WRITE = 3  # export's or report's output could not be written


def for_worst(severity: Severity | None) -> int:
    """The status for a run whose worst finding is ``severity`` (None: no finding)."""
    return {None: OK, Severity.WARNING: WARNING, Severity.CRITICAL: CRITICAL}[severity]
