"""``slurm://`` through login nodes whose users' login shells are bash, dash, zsh, fish,
tcsh or BusyBox sh and whose start-up files print (``tests.login_shells``): scontrol's
answer, the job's output file and its steps are read past every greeting."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.login_shells import SHELLS, can_have_accounts, chatty_box
from tests.sources.slurm.conftest import prints_steps
from tests.sshd import Sshd
from tests.support import rlwatch_as

pytestmark = pytest.mark.skipif(not can_have_accounts(),
                                reason="accounts of their own need root and unshare")


@pytest.fixture(scope="module")
def chatty_login(slurm_world, tmp_path_factory) -> Iterator[Sshd]:
    """A second login node of the cluster, its accounts' shells each greeting at login."""
    box = chatty_box(tmp_path_factory.mktemp("chatty-login"), slurm_world.home.public_key,
                     env={"SLURM_CONF": str(slurm_world.cluster.conf)}).start()
    for shell in SHELLS:
        slurm_world.home.add_host(f"login-{shell}", box.port, user=f"rlw-{shell}")
    slurm_world.home.trust(box.known_hosts_line())
    yield box
    box.stop()


@pytest.fixture(scope="module")
def finished_job(slurm_world) -> str:
    job = slurm_world.cluster.submit("shells", prints_steps(4))
    slurm_world.cluster.wait_for(job, "COMPLETED")
    return job


@pytest.mark.parametrize("shell", SHELLS)
def test_a_slurm_job_is_read_through_every_login_shell(slurm_world, chatty_login, finished_job, shell):
    done = rlwatch_as(slurm_world.home, "check", f"slurm://login-{shell}/{finished_job}", "--json")
    assert done.stdout, done.stderr
    result = json.loads(done.stdout)
    assert (result["run"]["state"], result["run"]["last_step"]) == ("finished", 3), done.stderr
    assert result["job"]["state"] == "COMPLETED" and result["job"]["nodes"] == ["localhost"]
