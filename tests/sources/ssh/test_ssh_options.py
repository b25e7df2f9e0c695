"""OpenSSH's ``-F``, ``-i`` and ``-J`` on rlwatch's command line, and ssh_config's own
timing, against real sshds (and a port that never answers)."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from tests.corpus import verl_log
from tests.sshd import ClientHome, Sshd, keygen
from tests.support import rlwatch_as


def _bare_home(path: Path, box: Sshd) -> ClientHome:
    """A client home whose known_hosts trusts ``box`` and whose ~/.ssh/config is empty."""
    home = ClientHome(path)
    home.trust(box.known_hosts_line())
    return home


def test_dash_F_reads_another_ssh_config(ssh_world, tmp_path):
    trusted, gpu, _ = ssh_world
    home = _bare_home(tmp_path / "home", gpu)
    other = tmp_path / "lab_config"
    other.write_text(f"Host elsewhere\n  HostName 127.0.0.1\n  Port {gpu.port}\n"
                     f"  IdentityFile {trusted.key}\n")
    target = f"elsewhere:{verl_log('036')}"
    assert "cannot resolve" in rlwatch_as(home, "check", target).stderr
    for option in ("-F", "--ssh-config"):
        done = rlwatch_as(home, "check", option, str(other), target)
        assert done.returncode == 2, done.stderr
    missing = rlwatch_as(home, "check", "-F", str(tmp_path / "nope"), target)
    assert missing.returncode == 3 and missing.stderr == f"rlwatch: -F {tmp_path / 'nope'}: no such file, or it cannot be read\n"


def test_dash_i_logs_in_with_another_key(ssh_world, tmp_path):
    trusted, _, _ = ssh_world
    key = tmp_path / "keys" / "lab_key"
    key.parent.mkdir()
    box = Sshd(tmp_path / "box", [keygen(key)]).start()  # only this key is authorized
    try:
        home = _bare_home(tmp_path / "home", box)
        target = f"ssh://127.0.0.1:{box.port}{verl_log('036')}"
        assert "authentication failed" in rlwatch_as(home, "check", target).stderr
        done = rlwatch_as(home, "check", "-i", str(key), target)
        assert done.returncode == 2, done.stderr
    finally:
        box.stop()


def test_dash_J_goes_through_the_jump_host(ssh_world, tmp_path):
    trusted, _, _ = ssh_world
    jump = Sshd(tmp_path / "jump", [trusted.public_key], log_sessions=True).start()
    box = Sshd(tmp_path / "box", [trusted.public_key]).start()
    try:
        trusted.add_host(f"jump{jump.port}", jump.port)
        trusted.trust(jump.known_hosts_line())
        trusted.trust(box.known_hosts_line())
        target = f"ssh://127.0.0.1:{box.port}{verl_log('036')}"
        assert rlwatch_as(trusted, "check", target).returncode == 2
        assert "Accepted publickey" not in jump.log.read_text()
        done = rlwatch_as(trusted, "check", "-J", f"jump{jump.port}", target)
        assert done.returncode == 2, done.stderr
        assert "Accepted publickey" in jump.log.read_text()  # the login went through it
    finally:
        jump.stop()
        box.stop()


def test_dash_i_adds_to_the_configs_identity_file(ssh_world, tmp_path):
    """As ``ssh -i``: the key given is tried first, then the ones ssh_config names for the
    host; it does not replace them (a lab key named only in ssh_config keeps working)."""
    lab_key, other_key = tmp_path / "keys" / "lab_key", tmp_path / "keys" / "other_key"
    lab_key.parent.mkdir()
    box = Sshd(tmp_path / "box", [keygen(lab_key)]).start()  # only the config's key is authorized
    other_public = keygen(other_key)
    try:
        home = _bare_home(tmp_path / "home", box)
        home.config.write_text(f"Host lab\n  HostName 127.0.0.1\n  Port {box.port}\n"
                               f"  IdentityFile {lab_key}\n")
        target = f"lab:{verl_log('036')}"
        assert rlwatch_as(home, "check", target).returncode == 2
        done = rlwatch_as(home, "check", "-i", str(other_key), target)
        assert done.returncode == 2, done.stderr
        # the key given is offered too: a box that authorizes only it is reached
        only_other = Sshd(tmp_path / "box2", [other_public]).start()
        try:
            home.config.write_text(home.config.read_text() + f"Host lab2\n  HostName 127.0.0.1\n"
                                   f"  Port {only_other.port}\n  IdentityFile {lab_key}\n")
            home.trust(only_other.known_hosts_line())
            assert "authentication failed" in rlwatch_as(home, "check", f"lab2:{verl_log('036')}").stderr
            done = rlwatch_as(home, "check", "-i", str(other_key), f"lab2:{verl_log('036')}")
            assert done.returncode == 2, done.stderr
        finally:
            only_other.stop()
    finally:
        box.stop()


@contextlib.contextmanager
def silent_box() -> Iterator[int]:
    """A port on 127.0.0.1 that takes connections and never says a word (a box whose sshd is
    wedged, or a firewall that swallows the handshake)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


def test_a_box_that_never_answers_is_given_the_configs_connect_timeout(client_home):
    """ssh_config's ConnectTimeout is the login's deadline, as it is ssh's (rlwatch's own 15 s
    cut off a box behind a slow VPN given 60); past it, one line naming the wait."""
    with silent_box() as port:
        client_home.add_host("wedged", port, extra="ConnectTimeout 2")
        started = time.monotonic()
        done = rlwatch_as(client_home, "check", "wedged:/runs/grpo.log")
        took = time.monotonic() - started
    assert done.returncode == 3 and done.stderr == "rlwatch: wedged: no answer within 2 s (host down or unreachable?)\n"
    assert took < 10, took  # not rlwatch's 15 s
