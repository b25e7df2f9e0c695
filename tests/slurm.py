"""A real single-node Slurm cluster for the Slurm tests: munged, slurmctld and slurmd.

Debian's packages (``slurmctld slurmd munge slurm-client``; ``.ci/run``
installs them) run from a temporary directory with their own ``slurm.conf``,
munge key and socket, state and spool directories, on free ports of
127.0.0.1: nothing of the machine's /etc/slurm or /run/munge is read or
written. One node, ``localhost``, with 2 CPUs; accounting is off
(``accounting_storage/none``, no slurmdbd), as on many small clusters, so
``sacct`` says so and rlwatch's fallback is exercised for real. The daemons
run as the user running the tests (root in CI, as Debian's units run them);
``stop`` cancels every job and ends the three daemons.
"""

from __future__ import annotations

import getpass
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.sshd import free_port

DAEMONS = ("munged", "slurmctld", "slurmd")
COMMANDS = ("sbatch", "scontrol", "scancel", "squeue", "sacct")


def missing_binaries() -> list[str]:
    """The Slurm and munge programs this machine lacks (empty: a cluster can be started)."""
    return [name for name in DAEMONS + COMMANDS
            if shutil.which(name) is None and not os.access(f"/usr/sbin/{name}", os.X_OK)]


def _binary(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


@dataclass
class SlurmCluster:
    """munged + slurmctld + slurmd under ``directory``, one node named ``localhost``."""

    directory: Path
    processes: list[subprocess.Popen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.conf = self.directory / "slurm.conf"
        self.socket = self.directory / "munge.socket"
        self.jobs = self.directory / "jobs"
        self.jobs.mkdir(exist_ok=True)

    @property
    def env(self) -> dict[str, str]:
        """The environment Slurm's commands need to find this cluster (its slurm.conf)."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def start(self) -> SlurmCluster:
        """Write the configuration, start the three daemons, wait until the node is idle."""
        for sub in ("state", "spool", "munge"):
            (self.directory / sub).mkdir(exist_ok=True)
        key = self.directory / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.conf.write_text(self._config())
        self._spawn(_binary("munged"), "--foreground", "--force", f"--socket={self.socket}",
                    f"--key-file={key}", f"--pid-file={self.directory / 'munge' / 'munged.pid'}",
                    f"--seed-file={self.directory / 'munge' / 'munged.seed'}",
                    f"--log-file={self.directory / 'munge' / 'munged.log'}")
        self.wait_until(lambda: self.socket.exists(), "munged to open its socket")
        self._spawn(_binary("slurmctld"), "-D", "-i", "-f", str(self.conf))
        self._spawn(_binary("slurmd"), "-D", "-N", "localhost", "-f", str(self.conf))
        self.wait_until(lambda: "idle" in self.run("sinfo", "-h", "-o", "%t", check=False).stdout,
                   "the node to be idle", timeout=60)
        return self

    def _config(self) -> str:
        where = self.directory
        return "\n".join([
            "ClusterName=rlwatch",
            "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            # Whoever runs the tests runs the daemons (root in CI, as Debian's units do).
            f"SlurmUser={getpass.getuser()}",
            f"SlurmdUser={getpass.getuser()}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            f"StateSaveLocation={where / 'state'}",
            f"SlurmdSpoolDir={where / 'spool'}",
            f"SlurmctldPidFile={where / 'slurmctld.pid'}",
            f"SlurmdPidFile={where / 'slurmd.pid'}",
            f"SlurmctldLogFile={where / 'slurmctld.log'}",
            f"SlurmdLogFile={where / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "ReturnToService=2",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            # A job past its limit is signalled at once and killed a second later.
            "KillWait=1",
            "OverTimeLimit=0",
            "NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN",
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n"

    def forget_jobs(self) -> None:
        """Restart the controller with its state cleared (``slurmctld -c``): it forgets every
        job, as it forgets one ``MinJobAge`` after it ends, and has slurmd end those still
        running."""
        controller = next(p for p in self.processes if Path(p.args[0]).name == "slurmctld")
        controller.terminate()
        controller.wait(10)
        self.processes.remove(controller)
        self._spawn(_binary("slurmctld"), "-D", "-c", "-i", "-f", str(self.conf))
        self.wait_until(lambda: "idle" in self.run("sinfo", "-h", "-o", "%t", check=False).stdout,
                        "the node to be idle again", timeout=60)

    def _spawn(self, *argv: str) -> None:
        log = open(self.directory / f"{Path(argv[0]).name}.out", "wb")
        self.processes.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                               stderr=subprocess.STDOUT, env=self.env))
        log.close()

    def wait_until(self, condition, what: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"{process.args[0]} exited ({process.returncode}) while "
                                       f"waiting for {what}; see {self.directory}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {what} within {timeout:g} s; see {self.directory}")
            time.sleep(0.2)

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        """A Slurm command against this cluster."""
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, check=check,
                              timeout=30)

    def submit(self, name: str, script: str, *options: str) -> str:
        """``sbatch`` ``script`` (a bash body) as job ``name``, its output in ``jobs/``;
        the job id."""
        path = self.jobs / f"{name}.sh"
        path.write_text("#!/bin/bash\n" + script)
        done = self.run("sbatch", "--parsable", "-J", name, "-o", str(self.jobs / f"{name}-%j.out"),
                        "-D", str(self.jobs), *options, str(path))
        return done.stdout.strip().split(";")[0]

    def output(self, name: str, job_id: str) -> Path:
        return self.jobs / f"{name}-{job_id}.out"

    def state(self, job_id: str) -> str:
        done = self.run("scontrol", "show", "job", "-o", job_id, check=False)
        for part in done.stdout.split():
            if part.startswith("JobState="):
                return part.split("=", 1)[1]
        return ""

    def wait_for(self, job_id: str, *states: str, timeout: float = 60.0) -> None:
        """Until the job is in one of ``states`` (RuntimeError after ``timeout``)."""
        self.wait_until(lambda: self.state(job_id) in states, f"job {job_id} {'/'.join(states)}", timeout)

    def stop(self) -> None:
        """Cancel every job (their processes end with them), then end the daemons."""
        jobs = self.run("squeue", "-h", "-o", "%i", check=False).stdout.split()
        if jobs:
            self.run("scancel", *jobs, check=False)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and self.run("squeue", "-h", "-o", "%i",
                                                           check=False).stdout.strip():
                time.sleep(0.2)
        for process in reversed(self.processes):
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()
