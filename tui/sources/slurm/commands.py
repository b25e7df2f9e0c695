"""The shell commands rlwatch runs on a Slurm login node: only Slurm's own read-only queries.

Each runs under ``sh -c`` with its values as arguments (``$1``…, each
``shlex``-quoted), so it means the same whatever the user's login shell is
(tcsh and fish read ``VAR=value;`` otherwise), and each asks in one round trip
what may take two questions: the controller first (``scontrol``), and
accounting (``sacct``) only when the controller does not know the job. Times
are asked for in UTC (``TZ=UTC``), which the parser reads them as.
"""

from __future__ import annotations

import shlex

from tui.parsers.jobs.slurm import SQUEUE_FORMAT, sacct_command_fields

# Where Slurm's commands live when a non-login shell's PATH lacks them (site installs).
_SETUP = 'PATH="$PATH:/opt/slurm/bin:/usr/local/slurm/bin:/usr/local/bin"; export TZ=UTC\n'
# Between scontrol's answer and sacct's in one output.
SACCT_MARK = "--- rlwatch: sacct ---"

# $1: the job, $2: SACCT_MARK, $3 and $4: sacct's fields with and without StdOut (23.02 on).
_JOB_QUERY = _SETUP + """scontrol show job -o "$1" 2>&1 && exit 0
echo "$2"
sacct -X -n -P -j "$1" --format="$3" 2>/dev/null || sacct -X -n -P -j "$1" --format="$4" 2>&1
"""
# $1: squeue's format.
_USER_JOBS = _SETUP + 'squeue --me -h -o "$1" 2>&1\n'


def _sh(script: str, *args: str) -> str:
    return shlex.join(["sh", "-c", script, "sh", *args])


def job_query(job_id: str) -> str:
    """scontrol's one-line record of ``job_id``; where the controller does not know it,
    ``SACCT_MARK`` and then sacct's record (with ``StdOut`` where sacct knows that field,
    else without), or sacct's complaint (accounting off)."""
    return _sh(_JOB_QUERY, job_id, SACCT_MARK, sacct_command_fields(True), sacct_command_fields(False))


def user_jobs() -> str:
    """squeue's lines for the jobs of the user rlwatch logged in as."""
    return _sh(_USER_JOBS, SQUEUE_FORMAT)
