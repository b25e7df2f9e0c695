"""``slurm://[user@]login[:port]/JOBID`` and ``slurm://login`` as typed, and what is refused."""

from __future__ import annotations

import pytest

from tui.cli.targets import open_target
from tui.sources.base import SourceError
from tui.sources.slurm.job_log import SlurmJobLog
from tui.sources.slurm.target import parse_slurm_target


@pytest.mark.parametrize(("text", "host", "user", "port", "job"), [
    ("slurm://login/812", "login", None, None, "812"),
    ("slurm://ana@login.hpc.example.org:2222/812_3", "login.hpc.example.org", "ana", 2222, "812_3"),
    ("slurm://login/812+1", "login", None, None, "812+1"),
    ("slurm://login", "login", None, None, None),
    ("slurm://login/", "login", None, None, None),
    ("slurm://[::1]:22/9", "::1", None, 22, "9"),
])
def test_a_login_node_and_a_job(text, host, user, port, job):
    target = parse_slurm_target(text)
    assert (target.login.host, target.login.user, target.login.port, target.job_id) == \
        (host, user, port, job)


@pytest.mark.parametrize("text", ["slurm://login/12;reboot", "slurm://login/$(id)", "slurm://login/abc",
                                  "slurm://login/12/13", "slurm://", "slurm://login/-1"])
def test_what_is_not_a_job_is_refused_in_a_sentence(text):
    with pytest.raises(SourceError, match="slurm://|Slurm job id"):
        parse_slurm_target(text)


def test_other_targets_are_not_slurms():
    assert parse_slurm_target("gpu:/runs/slurm-812.out") is None
    assert parse_slurm_target("/runs/slurm://x") is None


def test_a_slurm_target_opens_a_slurm_job_and_takes_no_log():
    assert isinstance(open_target("slurm://login/812").source, SlurmJobLog)
    with pytest.raises(SourceError, match="--log does not apply"):
        open_target("slurm://login/812", log="other.log")
