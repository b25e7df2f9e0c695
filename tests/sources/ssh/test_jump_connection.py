"""Reaching a host through another connection (``via``), as a cluster's nodes are reached from
its login node or head: the host key is checked all the same, and ``--accept-new-host-key``
fetches the new key through the jump host too (a compute node is not reachable directly)."""

from __future__ import annotations

import asyncio

import pytest

from tests.sshd import ClientHome
from tests.sources.ssh.test_remote_check import untrusting_home
from tui.sources.base import SourceError
from tui.sources.ssh.connection import connect
from tui.sources.ssh.target import parse_target


def through_gpu(home: ClientHome, inner_port: int, accept: bool) -> str:
    async def run() -> str:
        jump = await connect(parse_target("gpu:/"))
        try:
            node = await connect(parse_target(f"ssh://127.0.0.1:{inner_port}/"), accept, via=jump)
            done = await node.run("echo through", check=True)
            node.close()
            return str(done.stdout).strip()
        finally:
            jump.close()
    return asyncio.run(run())


def test_a_node_with_an_unknown_key_is_refused_then_recorded_through_the_jump_host(
        ssh_world, tmp_path, monkeypatch):
    _, gpu, inner = ssh_world
    home = untrusting_home(ssh_world, tmp_path / "home")
    home.trust(gpu.known_hosts_line())  # the login node is known, the compute node is not
    monkeypatch.setenv("HOME", str(home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    with pytest.raises(SourceError, match="unknown"):
        through_gpu(home, inner.port, accept=False)
    assert inner.host_public_key not in home.known_hosts.read_text()
    assert through_gpu(home, inner.port, accept=True) == "through"
    assert f"[127.0.0.1]:{inner.port} " + inner.host_public_key.split()[0] in home.known_hosts.read_text()
