"""Real OpenSSH servers on 127.0.0.1 for the SSH tests, and a client home that trusts them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.sshd import ClientHome, Sshd, find_sshd

if find_sshd() is None:
    pytest.skip("OpenSSH's sshd is not installed (.ci/run installs openssh-server)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def ssh_world(tmp_path_factory):
    """A client home with two servers: ``gpu`` (trusted alias) and ``inner`` reached via ProxyJump."""
    root = tmp_path_factory.mktemp("ssh")
    home = ClientHome(root / "home")
    gpu = Sshd(root / "gpu", [home.public_key]).start()
    inner = Sshd(root / "inner", [home.public_key]).start()
    home.add_host("gpu", gpu.port)
    home.add_host("inner", inner.port, extra="ProxyJump gpu")
    home.trust(gpu.known_hosts_line())
    home.trust(inner.known_hosts_line())
    yield home, gpu, inner
    gpu.stop()
    inner.stop()


@pytest.fixture
def client_home(ssh_world, monkeypatch):
    """Point this process's ``~`` at the test client home (no agent), for in-process tests."""
    home, _, _ = ssh_world
    monkeypatch.setenv("HOME", str(home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home


@pytest.fixture
def box_with(client_home, tmp_path) -> Iterator[Callable[..., str]]:
    """``box_with(date=SCRIPT, stat=SCRIPT)``: an sshd whose PATH has those wrappers first;
    returns its alias in the client home."""
    started: list[Sshd] = []

    def start(**tools: str) -> str:
        folder = tmp_path / f"box{len(started)}"
        (folder / "bin").mkdir(parents=True)
        for name, script in tools.items():
            (folder / "bin" / name).write_text(script)
            (folder / "bin" / name).chmod(0o755)
        box = Sshd(folder / "sshd", [client_home.public_key],
                   env={"PATH": f"{folder / 'bin'}:/usr/bin:/bin"})
        started.append(box.start())
        alias = f"box{box.port}"
        client_home.add_host(alias, box.port)
        client_home.trust(box.known_hosts_line())
        return alias

    yield start
    for box in started:
        box.stop()
