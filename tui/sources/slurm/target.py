"""``slurm://[user@]login[:port]/JOBID`` (a job) and ``slurm://[user@]login`` (the user's jobs)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui.sources.base import SourceError
from tui.sources.ssh.target import RemoteTarget

_URL = re.compile(r"^slurm://(?:(?P<user>[^@/]+)@)?(?P<host>\[[^\]]+\]|[^:/]+)(?::(?P<port>\d+))?"
                  r"(?:/(?P<job>[^/]*))?/?$", re.DOTALL)
# A job, an array job's task (123_4) or a heterogeneous job's component (123+1).
_JOB_ID = re.compile(r"^\d+(?:[_+]\d+)?$")


@dataclass(frozen=True, slots=True)
class SlurmTarget:
    """A Slurm login node reached over SSH, and the job on it (None: all the user's)."""

    login: RemoteTarget
    job_id: str | None

    @property
    def label(self) -> str:
        user = f"{self.login.user}@" if self.login.user else ""
        return f"slurm://{user}{self.login.host}" + (f"/{self.job_id}" if self.job_id else "")


def parse_slurm_target(text: str) -> SlurmTarget | None:
    """The Slurm target ``text`` names; None when it is not a ``slurm://`` URL, SourceError
    when it is one rlwatch cannot read (a job id that is not one)."""
    if not text.startswith("slurm://"):
        return None
    url = _URL.match(text)
    if url is None:
        raise SourceError(f"{text}: not a Slurm target; write slurm://[user@]login/JOBID, or "
                          "slurm://[user@]login for your jobs there")
    job = url.group("job") or None
    if job is not None and not _JOB_ID.match(job):
        raise SourceError(f"{text}: {job!r} is not a Slurm job id (digits, as sbatch printed it, "
                          "like 812 or 812_3 for an array task)")
    port = int(url.group("port")) if url.group("port") else None
    return SlurmTarget(RemoteTarget(url.group("host").strip("[]"), ".", url.group("user"), port), job)
