"""One real Ray cluster on 127.0.0.1 for all the Ray tests (``ray start --head``), with
token authentication on as recent Ray clusters have it, and the jobs they watch submitted
with ``ray job submit --no-wait``.

The head runs as ``ray start --block`` in a process group of its own, with ``$HOME`` in a
temporary directory (Ray's token file and caches land there, never in the user's
``~/.ray``); the group is ended at the end of the session, and anything left that names
the cluster's directory after it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.sshd import free_port, pids_mentioning, processes_mentioning

RAY = Path(sys.executable).parent / "ray"

CONSOLE = (Path(__file__).parents[2] / "fixtures" / "logs" / "generated" / "verl" / "verl_07_console_only"
           / "console.log")
JOB_SCRIPT = Path(__file__).with_name("verl_job.py")
TOKEN = "rlwatch-test-token-0123456789abcdef"
START_TIMEOUT_S = 90.0


@dataclass
class RayHead:
    """A running head: its dashboard port and the environment that reaches it as a user does."""

    directory: Path
    port: int
    env: dict[str, str]
    process: subprocess.Popen | None = None
    submitted: list[str] = field(default_factory=list)
    gcs_port: int = field(default_factory=free_port)  # where other nodes join the cluster

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def target(self, job: str = "") -> str:
        return f"ray+http://127.0.0.1:{self.port}/{job}"

    def api(self, path: str) -> object:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def ray(self, *args: str) -> subprocess.CompletedProcess:
        """The ``ray`` command as a user of this cluster runs it."""
        return subprocess.run([str(RAY), *args], env=self.env, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)

    def submit(self, job: str, last_step: int, how: str, delay: float = 0.05) -> str:
        """``ray job submit --no-wait`` of the verl-printing script; returns its submission id."""
        done = self.ray("job", "submit", "--no-wait", "--submission-id", job, "--",
                        sys.executable, str(JOB_SCRIPT), str(CONSOLE), str(last_step), how, str(delay))
        assert done.returncode == 0, done.stderr
        self.submitted.append(job)
        return job

    def wait_for(self, job: str, *statuses: str, timeout: float = 60.0) -> dict:
        """The job's details once its status is one of ``statuses``."""
        deadline = time.monotonic() + timeout
        while True:
            details = self.api(f"/api/jobs/{job}")
            assert isinstance(details, dict)
            if details["status"] in statuses:
                return details
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job} is {details['status']}, not {statuses}, after {timeout:g} s")
            time.sleep(0.2)

    def start(self) -> RayHead:
        with open(self.directory / "head.log", "wb") as head_log:
            self.process = self._popen(head_log)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                self.api("/api/jobs/")
                return self
            except (OSError, urllib.error.URLError, ValueError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    log = (self.directory / "head.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"ray start --head did not serve its dashboard: {log}") from None
                time.sleep(0.5)

    def _popen(self, head_log) -> subprocess.Popen:
        """``ray start --head --block`` in a process group of its own, on free ports."""
        return subprocess.Popen(
            [str(RAY), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
             f"--port={self.gcs_port}", "--dashboard-host=127.0.0.1", f"--dashboard-port={self.port}",
             f"--ray-client-server-port={free_port()}", f"--dashboard-agent-listen-port={free_port()}",
             "--num-cpus=2", "--object-store-memory=100000000", f"--temp-dir={self.directory / 't'}",
             "--include-dashboard=true", "--disable-usage-stats"],
            env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=head_log,
            start_new_session=True)

    def stop(self) -> None:
        """End the head's process group, then whatever else names the cluster's directory."""
        end_group(self.process)
        self.process = None
        end_mentioning(str(self.directory))

    def alive_nodes(self) -> list[str]:
        """The IPs of the nodes the state API reports alive."""
        answer = self.api("/api/v0/nodes?limit=1000")
        assert isinstance(answer, dict)
        return [node["node_ip"] for node in answer["data"]["result"]["result"] if node["state"] == "ALIVE"]


@dataclass
class RayWorker:
    """A second node of the head's cluster, on this machine at a loopback address of its own
    (all of 127/8 is this machine on Linux): ``ray start --address`` as on a real worker."""

    head: RayHead
    ip: str
    process: subprocess.Popen | None = None

    def start(self) -> RayWorker:
        """Join the cluster and wait until the state API reports the node alive."""
        log = self.head.directory / f"worker-{self.ip}.log"
        with open(log, "wb") as worker_log:
            self.process = subprocess.Popen(
                [str(RAY), "start", "--block", f"--address=127.0.0.1:{self.head.gcs_port}",
                 f"--node-ip-address={self.ip}", f"--dashboard-agent-listen-port={free_port()}",
                 "--num-cpus=1", "--object-store-memory=100000000", "--disable-usage-stats"],
                env=self.head.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=worker_log,
                start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while self.ip not in self.head.alive_nodes():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"ray start --address did not join: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.5)
        return self

    def stop(self) -> None:
        """End the node's process group, then its processes that the group missed (they name
        the cluster's directory and the node's address), as ``ray stop`` would on its machine:
        ``ray stop`` itself here would end every Ray cluster of this machine's user."""
        end_group(self.process)
        self.process = None
        for _ in range(20):
            left = [pid for pid in pids_mentioning(str(self.head.directory)) if names(pid, self.ip)]
            if not left:
                break
            kill(left)
        deadline = time.monotonic() + 30  # the tests after these read a cluster of the head alone
        while self.ip in self.head.alive_nodes() and time.monotonic() < deadline:
            time.sleep(0.5)


def end_group(process: subprocess.Popen | None) -> None:
    """TERM, then KILL, the process group ``process`` leads (started with a session of its own)."""
    if process is None:
        return
    for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue


def end_mentioning(text: str) -> None:
    """KILL every process whose arguments name ``text`` (a directory of the test's own)."""
    for _ in range(20):
        left = pids_mentioning(text)
        if not left:
            break
        kill(left)


def names(pid: int, text: str) -> bool:
    """Whether process ``pid``'s arguments name ``text`` (False once it is gone)."""
    try:
        return text.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.25)


@pytest.fixture(scope="session")
def ray_head():
    """The session's Ray head on 127.0.0.1, token authentication on."""
    if not RAY.exists():
        pytest.skip("Ray is not installed (pip install -e '.[test]' installs ray[default])")
    directory = Path(tempfile.mkdtemp(prefix="rlw-ray-"))  # short: Ray's socket paths must fit
    (directory / "home").mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    port = free_port()
    env.update(HOME=str(directory / "home"), RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=TOKEN,
               RAY_USAGE_STATS_ENABLED="0", RAY_API_SERVER_ADDRESS=f"http://127.0.0.1:{port}")
    head = RayHead(directory, port, env).start()
    try:
        yield head
    finally:
        head.stop()
        assert not processes_mentioning(str(directory))
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def ray_jobs(ray_head):
    """The jobs the tests read, submitted at once so they run side by side: ``ok`` prints
    eight steps and exits 0, ``crashed`` raises after step 3, ``stopped`` was stopped with
    ``ray job stop`` after step 2."""
    jobs = {"ok": ray_head.submit("rlw-ok", 8, "finish"),
            "crashed": ray_head.submit("rlw-crashed", 3, "raise"),
            "stopped": ray_head.submit("rlw-stopped", 2, "hang")}
    ray_head.wait_for(jobs["ok"], "SUCCEEDED")
    ray_head.wait_for(jobs["crashed"], "FAILED")
    ray_head.wait_for(jobs["stopped"], "RUNNING")
    deadline = time.monotonic() + 30
    while "step:2 -" not in json.dumps(ray_head.api(f"/api/jobs/{jobs['stopped']}/logs")):
        assert time.monotonic() < deadline, "the job to stop never printed step 2"
        time.sleep(0.2)
    stopped = ray_head.ray("job", "stop", jobs["stopped"])
    assert stopped.returncode == 0, stopped.stderr
    ray_head.wait_for(jobs["stopped"], "STOPPED")
    return jobs
