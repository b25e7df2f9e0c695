"""The shell commands rlwatch runs on a Slurm login node: only Slurm's own read-only queries.

Every value in them is ``shlex``-quoted, and each asks in one round trip what
may take two questions: the controller first (``scontrol``), and accounting
(``sacct``) only when the controller does not know the job. Times are asked
for in UTC (``TZ=UTC``), which the parser reads them as.
"""

from __future__ import annotations

import shlex

from tui.parsers.jobs.slurm import SQUEUE_FORMAT, sacct_command_fields

# Where Slurm's commands live when a non-login shell's PATH lacks them (site installs).
_PATH = 'PATH="$PATH:/opt/slurm/bin:/usr/local/slurm/bin:/usr/local/bin"; export TZ=UTC'
# Between scontrol's answer and sacct's in one output.
SACCT_MARK = "--- rlwatch: sacct ---"


def job_query(job_id: str) -> str:
    """scontrol's one-line record of ``job_id``; where the controller does not know it,
    ``SACCT_MARK`` and then sacct's record (with ``StdOut`` where sacct knows that field,
    23.02 on, else without), or sacct's complaint (accounting off)."""
    job = shlex.quote(job_id)
    sacct = f"sacct -X -n -P -j {job} --format="
    return (f"{_PATH}; scontrol show job -o {job} 2>&1 && exit 0; echo {shlex.quote(SACCT_MARK)}; "
            f"{sacct}{sacct_command_fields(True)} 2>/dev/null || "
            f"{sacct}{sacct_command_fields(False)} 2>&1")


def user_jobs() -> str:
    """squeue's lines for the jobs of the user rlwatch logged in as."""
    return f"{_PATH}; squeue --me -h -o {shlex.quote(SQUEUE_FORMAT)} 2>&1"
