"""A Ray cluster of two nodes: the session's head and a worker that joins it at 127.0.0.2
(``ray start --address``). The state API reports the worker, and the run's accelerators are
read on it too: over SSH to its address (a real sshd listening at 127.0.0.2, a replayed H100
MIG nvidia-smi on its PATH), directly for ``ray+http://`` and with the head as the jump host for
``ray://``; a worker that cannot be reached says so on its accelerator line."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sources.accelerators.conftest import H100_MIG, H100_REAL
from tests.sources.accelerators.replay import install, path_with
from tests.sources.ray.conftest import RayWorker
from tests.sshd import ClientHome, Sshd, find_sshd, free_port
from tests.support import rlwatch, until
from tui.session.run_session import RunSession
from tui.sources.ray.address import parse_ray_target
from tui.sources.ray.ray_job import RayJobLog

if find_sshd() is None:
    pytest.skip("OpenSSH's sshd is not installed (.ci/run installs openssh-server)", allow_module_level=True)

NODE_IP = "127.0.0.2"


@dataclass
class Cluster:
    """The two nodes, their sshds and a client home whose ssh_config knows both: ``head`` (the
    head's box) and the worker by its IP, as a user's ``Host 10.0.*`` block would."""

    worker: RayWorker
    home: ClientHome
    head_box: Sshd
    node_box: Sshd
    here: Path  # a bin folder with the nvidia-smi of this machine, which hosts the head


def box(folder: Path, home: ClientHome, tool_config: dict, listen: str | None = None) -> Sshd:
    """An sshd whose PATH holds nvidia-smi replaying ``tool_config``, listening at ``listen`` too."""
    install(folder / "bin", "nvidia-smi", tool_config)
    server = Sshd(folder / "sshd", [home.public_key])
    with open(server.config, "a") as config:
        config.write(f"SetEnv PATH={path_with(folder / 'bin')}\n")
        if listen:
            config.write(f"ListenAddress {listen}\n")
    return server.start()


@pytest.fixture(scope="module")
def cluster(ray_head, ray_jobs, tmp_path_factory):
    root = tmp_path_factory.mktemp("ray-nodes")
    home = ClientHome(root / "home")
    head_box = box(root / "head", home, H100_REAL)
    node_box = box(root / "node", home, H100_MIG, listen=NODE_IP)
    home.add_host("head", head_box.port)
    home.trust(head_box.known_hosts_line())
    with open(home.config, "a") as config:
        config.write(f"Host {NODE_IP}\n  Port {node_box.port}\n  IdentityFile {home.key}\n  IdentitiesOnly yes\n")
    home.trust(f"[{NODE_IP}]:{node_box.port} {node_box.host_public_key}")
    install(root / "here", "nvidia-smi", H100_REAL)
    worker = RayWorker(ray_head, NODE_IP).start()
    try:
        yield Cluster(worker, home, head_box, node_box, root / "here")
    finally:
        worker.stop()
        head_box.stop()
        node_box.stop()


def user_env(cluster: Cluster, ray_head) -> dict[str, str]:
    """A user of the cluster: the client home, Ray's token, this machine's nvidia-smi on PATH."""
    return dict(cluster.home.env(), RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=ray_head.env["RAY_AUTH_TOKEN"],
                PATH=path_with(cluster.here))


def test_ray_http_reads_the_workers_gpus_over_ssh_to_its_address(cluster, ray_head, ray_jobs):
    done = rlwatch("check", ray_head.target(ray_jobs["ok"]), "--json", env=user_env(cluster, ray_head))
    assert done.returncode == 0, done.stderr  # the job's low clip fraction is a note
    result = json.loads(done.stdout)
    assert result["job"]["nodes"] == [NODE_IP]  # the state API's live nodes but the head
    gpus = result["accelerators"]
    # The head is this machine (its dashboard is on 127.0.0.1): its H100, read here; the worker's
    # GPUs (another box's capture, an H100 in MIG mode), read over SSH at 127.0.0.2.
    on_head = [gpu for gpu in gpus if gpu["host"] == socket.gethostname()]
    on_node = [gpu for gpu in gpus if gpu["host"] == NODE_IP]
    assert len(on_head) == 1 and "H100" in on_head[0]["name"]
    assert on_node and all("H100" in gpu["name"] for gpu in on_node)
    assert len(on_head) + len(on_node) == len(gpus)


def tcp_peers() -> set[tuple[str, int]]:
    """The (address, port) of every TCP connection this process holds, from /proc."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    peers = set()
    for line in Path("/proc/self/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[9] in inodes and fields[3] == "01":  # ESTABLISHED
            address, port = fields[2].split(":")
            peers.add((socket.inet_ntoa(bytes.fromhex(address)[::-1]), int(port, 16)))
    return peers


async def test_ray_ssh_polls_the_workers_gpus_through_the_head(cluster, ray_head, ray_jobs, monkeypatch):
    for name, value in user_env(cluster, ray_head).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    source = RayJobLog(parse_ray_target(f"ray://head:{ray_head.port}/{ray_jobs['ok']}"), poll_s=0.5)
    session = RunSession(source)
    await session.connect()
    following = asyncio.create_task(session.follow())
    try:
        hosts = lambda: {sample.host for sample in session.accelerators.latest()}  # noqa: E731
        await until(lambda: {"head", NODE_IP} <= hosts(), 30, "readings of the head and the worker")
        # Polled, not read once: the worker's readings keep coming.
        first = max(device.updated for device in session.accelerators.devices(NODE_IP))
        await until(lambda: max(device.updated for device in session.accelerators.devices(NODE_IP)) > first,
                    30, "a second reading of the worker")
        # The head's sshd carries the worker's connection: this process holds none to 127.0.0.2.
        peers = tcp_peers()
        assert ("127.0.0.1", cluster.head_box.port) in peers
        assert not any(address == NODE_IP for address, _ in peers)
        assert cluster.node_box.session_pids(), "the worker's sshd serves no connection"
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await session.close()


async def test_the_workers_gpus_are_read_again_once_the_heads_connection_is_made_again(cluster, ray_head,
                                                                                     monkeypatch):
    """The head's SSH side restarts mid-job: ray:// makes its connection again, and the worker,
    reached through the head, is read again through the new one (its connection went down
    with the old one, and was asked for readings forever)."""
    for name, value in user_env(cluster, ray_head).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    job = ray_head.submit("rlw-head-restart", 60, "finish", delay=0.5)
    source = RayJobLog(parse_ray_target(f"ray://head:{ray_head.port}/{job}"), poll_s=0.5)
    session = RunSession(source)
    await session.connect()
    following = asyncio.create_task(session.follow())
    newest = lambda: max((d.updated for d in session.accelerators.devices(NODE_IP)), default=0.0)  # noqa: E731
    try:
        await until(lambda: newest() > 0, 30, "a reading of the worker")
        cluster.head_box.stop()
        cluster.head_box.start()
        restarted = time.time()
        await until(lambda: newest() > restarted + 1, 40, "a reading of the worker after the restart")
        assert cluster.node_box.session_pids(), "the worker's sshd serves no connection"
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await session.close()
        ray_head.ray("job", "stop", job)


def a_user_whose_worker_port_answers_nothing(cluster: Cluster, ray_head, tmp_path, monkeypatch) -> None:
    """This process's environment as a user whose ssh_config sends the worker's address to a
    port where nothing listens."""
    home = ClientHome(tmp_path / "home")
    with open(home.config, "a") as config:
        config.write(f"Host {NODE_IP}\n  Port {free_port()}\n  IdentityFile {home.key}\n")
    for name, value in dict(user_env(cluster, ray_head), HOME=str(home.path)).items():
        monkeypatch.setenv(name, value)


async def test_a_worker_that_cannot_be_reached_directly_says_so_on_its_line(cluster, ray_head, ray_jobs,
                                                                            tmp_path, monkeypatch):
    """ray+http:// reaches a worker directly; where its SSH port answers nothing, the worker's
    accelerator line says why and how ray:// would reach it instead."""
    a_user_whose_worker_port_answers_nothing(cluster, ray_head, tmp_path, monkeypatch)
    source = RayJobLog(parse_ray_target(ray_head.target(ray_jobs["ok"])), poll_s=0.5)
    session = RunSession(source)
    await session.connect()
    following = asyncio.create_task(session.follow())
    try:
        await until(lambda: NODE_IP in session.accelerators.status, 30, "the worker's line")
        status = session.accelerators.status[NODE_IP]
        assert not status.ok
        assert "cannot connect" in status.text and "\n" not in status.text
        assert "ray+http:// reaches a worker node directly over SSH; ray://127.0.0.1/JOB goes through " \
               "the head" in status.text
        # The head's own GPU is read all the same.
        await until(lambda: any(s.host == socket.gethostname() for s in session.accelerators.latest()), 30,
                    "the head's reading")
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await session.close()


async def test_a_check_names_an_unreachable_worker_once_in_its_note(cluster, ray_head, ray_jobs,
                                                                     tmp_path, monkeypatch):
    """A check's note for a worker it cannot reach reads "127.0.0.2: cannot connect …", the
    address once (the connection's own error names it already)."""
    a_user_whose_worker_port_answers_nothing(cluster, ray_head, tmp_path, monkeypatch)
    session = RunSession(RayJobLog(parse_ray_target(ray_head.target(ray_jobs["ok"])), poll_s=0.5))
    await session.connect()
    try:
        notes = await session.load(accelerators=True)
    finally:
        await session.close()
    about_worker = [note for note in notes if NODE_IP in note]
    assert len(about_worker) == 1 and about_worker[0].startswith(f"{NODE_IP}: ")
    assert not about_worker[0].startswith(f"{NODE_IP}: {NODE_IP}"), about_worker[0]
