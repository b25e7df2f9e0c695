"""``ray://HEAD:PORT/JOB``: the same Jobs API through an SSH connection to the head (a real
OpenSSH sshd on 127.0.0.1, reached by its ssh_config alias) and a local port forwarded to
the dashboard's port there; the cluster's other nodes are reached with the head as the jump
host."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.sshd import ClientHome, Sshd, find_sshd, free_port
from tests.support import rlwatch
from tui.sources.base import SourceError
from tui.sources.ray.address import parse_ray_target
from tui.sources.ray.ray_job import RayJobLog
from tui.sources.ssh.target import RemoteTarget

if find_sshd() is None:
    pytest.skip("OpenSSH's sshd is not installed (.ci/run installs openssh-server)", allow_module_level=True)


@pytest.fixture(scope="module")
def head_world(tmp_path_factory):
    """A client home whose ssh_config knows ``head`` (the Ray head's box) and ``node`` (another
    node of the cluster), both trusted."""
    root = tmp_path_factory.mktemp("ray-ssh")
    home = ClientHome(root / "home")
    head = Sshd(root / "head", [home.public_key]).start()
    node = Sshd(root / "node", [home.public_key]).start()
    for alias, server in (("head", head), ("node", node)):
        home.add_host(alias, server.port)
        home.trust(server.known_hosts_line())
    yield home, head, node
    head.stop()
    node.stop()


def user_env(home: ClientHome, ray_head) -> dict[str, str]:
    """The client home's environment with the cluster's token, as a user of both has it."""
    return dict(home.env(), RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=ray_head.env["RAY_AUTH_TOKEN"])


def test_check_through_the_head_reads_the_job_as_http_does(head_world, ray_head, ray_jobs):
    home, _, _ = head_world
    done = rlwatch("check", f"ray://head:{ray_head.port}/{ray_jobs['crashed']}", "--json",
                   env=user_env(home, ray_head))
    assert done.returncode == 2, done.stderr
    result = json.loads(done.stdout)
    assert (result["run"]["state"], result["run"]["last_step"]) == ("crashed", 3)
    (failed,) = [finding for finding in result["findings"] if finding["rule"] == "job-failed"]
    assert "RuntimeError: CUDA error" in failed["exception"]
    assert f"on ray://head (its port {ray_head.port}, over SSH)" in result["run"]["log"]


def test_a_head_port_without_a_dashboard_is_one_line(head_world, ray_head):
    home, _, _ = head_world
    done = rlwatch("check", f"ray://head:{free_port()}/x", env=user_env(home, ray_head))
    assert done.returncode == 3
    (line,) = done.stderr.splitlines()
    assert line.startswith("rlwatch: ray://head (its port") and "Ray's dashboard" in line


async def test_a_node_is_reached_through_the_head(head_world, ray_head, ray_jobs, monkeypatch):
    home, head, _ = head_world
    for name, value in user_env(home, ray_head).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    source = RayJobLog(parse_ray_target(f"ray://head:{ray_head.port}/{ray_jobs['ok']}"))
    try:
        await source.connect()
        node = await source.node_host("node")
        assert (await node.runner.run(["echo", "on the node"])).strip() == b"on the node"
        assert source.accelerator_host().name == "head"
        head.stop()  # the node's own sshd is still up: only the path through the head is gone
        with pytest.raises(SourceError):
            await source.node_host("node")
    finally:
        await source.close()
        head.start()


def test_check_of_two_jobs_through_one_head_is_the_fleets_array(head_world, ray_head, ray_jobs):
    home, _, _ = head_world
    done = rlwatch("check", *(f"ray://head:{ray_head.port}/{ray_jobs[job]}" for job in ("ok", "crashed")),
                   "--json", env=user_env(home, ray_head))
    assert done.returncode == 2, done.stderr
    ok, crashed = json.loads(done.stdout)
    assert (ok["name"], ok["host"], ok["run"]["state"]) == ("rlw-ok", "head", "finished")
    assert (crashed["host"], crashed["run"]["state"], crashed["job"]["state"]) == ("head", "crashed", "FAILED")


async def test_a_fleets_ray_jobs_on_one_head_share_one_ssh_login(head_world, ray_head, ray_jobs, monkeypatch):
    """Two ray:// runs of one head in a fleet: one connection on the head's sshd, not two."""
    from tui.cli.targets import open_target
    from tui.sources.ssh.pool import ConnectionPool

    home, head, _ = head_world
    for name, value in user_env(home, ray_head).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)

    async def connections_for_two_runs(pool: ConnectionPool | None) -> int:
        sources = [open_target(f"ray://head:{ray_head.port}/{ray_jobs[job]}", pool=pool).source
                   for job in ("ok", "crashed")]
        before = set(head.session_pids())
        try:
            for source in sources:
                await source.connect()
                assert [event async for event in source.stream(0, follow=False)]
            return len(set(head.session_pids()) - before)
        finally:
            for source in sources:
                await source.close()

    pool = ConnectionPool()
    try:
        assert await connections_for_two_runs(pool) == 1
        assert pool.trouble(RemoteTarget("head", ".")) is None
    finally:
        await pool.close()
    assert await connections_for_two_runs(None) == 2  # each run on its own logs in itself


async def test_a_dropped_ssh_connection_to_the_head_is_made_again_and_the_log_goes_on(head_world, ray_head,
                                                                                     monkeypatch):
    """The head's sshd goes away mid-job (a reboot of its SSH side): the connection is made again,
    the port forwarded again, and the log resumes where it was, nothing lost or doubled."""
    from tests.support import until
    from tui.sources.base import Data, JobState

    home, head, _ = head_world
    for name, value in user_env(home, ray_head).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    job = ray_head.submit("rlw-ssh-drop", 8, "finish", delay=0.15)
    source = RayJobLog(parse_ray_target(f"ray://head:{ray_head.port}/{job}"), poll_s=0.5, quiet_s=1.0)
    pieces: list[bytes] = []
    states: list[str] = []

    async def read() -> None:
        async for event in source.stream(0, follow=True):
            if isinstance(event, Data):
                pieces.append(event.data)
            elif isinstance(event, JobState):
                states.append(event.record.state)

    await source.connect()
    reader = asyncio.create_task(read())
    try:
        await until(lambda: b"step:3 -" in b"".join(pieces), 60, "step 3 over the first connection")
        head.stop()
        head.start()
        await until(lambda: "SUCCEEDED" in states and b"step:8 -" in b"".join(pieces), 60, "the job's end")
        assert b"".join(pieces) == ray_head.api(f"/api/jobs/{job}/logs")["logs"].encode()
        # The head's accelerator tools run over the new connection too.
        assert (await source.accelerator_host().runner.run(["echo", "again"])).strip() == b"again"
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await source.close()


async def test_a_head_read_over_ssh_made_when_first_read_says_why_it_cannot_be(head_world, monkeypatch):
    """ray+http:// needs no SSH for the job; the head's accelerators connect at their first read,
    and a head that cannot be reached is the accelerator line's reason, not the target's failure."""
    from tui.sources.accelerators.runner import CommandFailed
    from tui.sources.ssh.on_demand import on_demand_host

    home, _, _ = head_world
    monkeypatch.setenv("HOME", str(home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    host, runner = on_demand_host("head")
    try:
        assert (await host.runner.run(["echo", "on the head"])).strip() == b"on the head"
    finally:
        await runner.close()
    host, runner = on_demand_host("no-such-head.invalid")
    with pytest.raises(CommandFailed, match="cannot resolve the host name"):
        await host.runner.run(["nvidia-smi"])
