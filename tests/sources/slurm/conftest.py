"""A real single-node Slurm cluster behind a real sshd, and jobs that print verl's lines."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.slurm import SlurmCluster, missing_binaries
from tests.sshd import ClientHome, Sshd, find_sshd
from tests.support import GENERATED


def skip_without_slurm() -> None:
    """Skip, saying why, where sshd or Slurm is not installed (``.ci/run`` installs both)."""
    if find_sshd() is None:
        pytest.skip("OpenSSH's sshd is not installed (.ci/run installs openssh-server)")
    if missing_binaries():
        pytest.skip(f"Slurm is not installed (missing {', '.join(missing_binaries())}; .ci/run "
                    "installs slurmctld slurmd munge slurm-client)")

# verl's own console lines (the generated verl 0.7 run): what a training job prints.
# (A progress bar's redraw shares a line with the next step line there; the step line alone.)
STEP_LINES = [line[line.index("step:"):] for line in (GENERATED / "verl_07_console_only" / "console.log")
              .read_text().splitlines() if "step:" in line]
TRACEBACK = ("Traceback (most recent call last):\n"
             '  File "/app/verl/trainer/main_ppo.py", line 42, in main\n'
             "    run_ppo(config)\n"
             "RuntimeError: CUDA error: an illegal memory access was encountered\n")


def prints_steps(count: int, then: str = "") -> str:
    """A job script that prints ``count`` of verl's step lines (steps 0 to count - 1), then
    runs ``then``."""
    lines = "".join(f"printf '%s\\n' {shlex.quote(line)}\nsleep 0.1\n" for line in STEP_LINES[:count])
    return lines + then


@dataclass
class SlurmWorld:
    """The cluster, the login node's sshd (``login`` in the client home; the cluster's one
    node, ``localhost``, is the same sshd) and the job that runs into its time limit, submitted first so
    it is over by the time its test looks."""

    cluster: SlurmCluster
    home: ClientHome
    login: Sshd
    timeout_job: str


@contextmanager
def cluster_behind_login(root: Path) -> Iterator[tuple[SlurmCluster, ClientHome, Sshd]]:
    """A started cluster under ``root`` and its login node: an sshd that is ``login`` in a
    client home (and ``localhost``, the cluster's one node, reached through it); both
    stopped on leaving, every job cancelled."""
    skip_without_slurm()
    cluster = SlurmCluster(root / "cluster")
    login = None
    try:
        cluster.start()
        home = ClientHome(root / "home")
        # The login node: scontrol there finds this cluster as /etc/slurm/slurm.conf would.
        login = Sshd(root / "login", [home.public_key], env={"SLURM_CONF": str(cluster.conf)}).start()
        home.add_host("login", login.port)
        home.add_host("localhost", login.port)
        home.trust(login.known_hosts_line())
        yield cluster, home, login
    finally:
        if login is not None:
            login.stop()
        cluster.stop()


@pytest.fixture(scope="session")
def slurm_world(tmp_path_factory):
    with cluster_behind_login(tmp_path_factory.mktemp("slurm")) as (cluster, home, login):
        timeout_job = cluster.submit("timeout", prints_steps(3, "sleep 600\n"), "--time=1")
        yield SlurmWorld(cluster, home, login, timeout_job)
