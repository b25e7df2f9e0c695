"""``rlwatch check`` over a real sshd: the same answer as locally, and clear errors."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from tests.corpus import verl_log
from tests.sshd import ClientHome, Sshd, keygen
from tests.support import comparable, rlwatch_as


def untrusting_home(ssh_world, path) -> ClientHome:
    """A client home with the authorized key and the ``gpu`` alias, but an empty known_hosts."""
    trusted, gpu, _ = ssh_world
    home = ClientHome(path)
    for name in ("id_ed25519", "id_ed25519.pub"):
        shutil.copy(trusted.ssh / name, home.ssh / name)
    home.add_host("gpu", gpu.port)
    return home


# 008, 009 and 018 crashed: the crash, its exception line and offset come out the same
# from the box's grep and a range read of the failure block as from the local read.
@pytest.mark.parametrize("prefix", ["032", "034", "008", "009", "018"])
def test_through_an_alias_the_same_json_as_locally(ssh_world, prefix):
    home, _, _ = ssh_world
    log = str(verl_log(prefix))
    remote = rlwatch_as(home, "check", f"gpu:{log}", "--json")
    local = rlwatch_as(home, "check", log, "--json")
    assert remote.returncode == local.returncode, remote.stderr
    assert comparable(json.loads(remote.stdout)) == comparable(json.loads(local.stdout))
    assert json.loads(remote.stdout)["run"]["log"] == f"gpu:{log}"


def test_url_with_a_non_default_port(ssh_world):
    home, gpu, _ = ssh_world
    done = rlwatch_as(home, "check", f"ssh://127.0.0.1:{gpu.port}{verl_log('036')}", "--json")
    assert done.returncode == 2, done.stderr  # 036's nan loss is critical
    assert json.loads(done.stdout)["latest"]["critic/vf_loss"] == "nan"


def test_through_a_proxyjump_hop(ssh_world):
    home, _, _ = ssh_world
    done = rlwatch_as(home, "check", f"inner:{verl_log('036')}", "--json")
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["run"]["steps"] == 1


def test_a_run_directory_is_searched_on_the_box(ssh_world, tmp_path):
    home, _, _ = ssh_world
    shutil.copy(verl_log("031"), tmp_path / "train.log")
    (tmp_path / "notes.txt").write_text("nothing\n")
    done = rlwatch_as(home, "check", f"gpu:{tmp_path}", "--json")
    assert json.loads(done.stdout)["run"]["log"] == f"gpu:{tmp_path}/train.log"
    assert "train.log" in done.stderr


def test_hostile_path_is_read_as_a_path_and_executes_nothing(ssh_world, tmp_path):
    home, _, _ = ssh_world
    name = f"rlwatch-pwned-{os.getpid()}"  # relative: it would land in the remote home
    canary = Path.home() / name
    run_dir = tmp_path / f"run 'q\" $(touch {name}) ; `touch {name}` \n x"
    run_dir.mkdir()
    shutil.copy(verl_log("036"), run_dir / "train log $(id).log")
    done = rlwatch_as(home, "check", f"gpu:{run_dir}", "--json")
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["run"]["steps"] == 1
    assert not canary.exists()


def test_unknown_host_key_is_refused_then_accepted_with_the_flag(ssh_world, tmp_path):
    gpu = ssh_world[1]
    home = untrusting_home(ssh_world, tmp_path / "fresh")
    refused = rlwatch_as(home, "check", f"gpu:{verl_log('036')}")
    assert refused.returncode == 3 and "Traceback" not in refused.stderr
    assert "unknown" in refused.stderr and "--accept-new-host-key" in refused.stderr
    assert home.known_hosts.read_text() == ""
    accepted = rlwatch_as(home, "check", f"gpu:{verl_log('036')}", "--accept-new-host-key")
    assert accepted.returncode == 2, accepted.stderr
    assert gpu.host_public_key in home.known_hosts.read_text()
    again = rlwatch_as(home, "check", f"gpu:{verl_log('036')}")  # now known: no flag needed
    assert again.returncode == 2, again.stderr


def test_changed_host_key_is_always_refused(ssh_world, tmp_path):
    gpu = ssh_world[1]
    home = untrusting_home(ssh_world, tmp_path / "changed")
    other = tmp_path / "other_host_key"
    kind, blob, *_ = keygen(other).split()
    home.trust(f"[127.0.0.1]:{gpu.port} {kind} {blob}")
    done = rlwatch_as(home, "check", f"gpu:{verl_log('036')}", "--accept-new-host-key")
    assert done.returncode == 3 and "CHANGED" in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


def test_a_host_key_of_another_kind_is_a_changed_identification(ssh_world, tmp_path):
    """ed25519 known, the server now offers only RSA: refused, said as OpenSSH says it (it was
    "Connection reset by peer": asyncssh asked for ed25519 only, and the server hung up)."""
    home, _, _ = ssh_world
    before = Sshd(tmp_path / "before", [home.public_key])
    now = Sshd(tmp_path / "now", [home.public_key], port=before.port, host_key_kind="rsa").start()
    try:
        home = untrusting_home(ssh_world, tmp_path / "kind")
        home.add_host("reinstalled", now.port)
        home.trust(before.known_hosts_line())
        done = rlwatch_as(home, "check", f"reinstalled:{verl_log('036')}")
    finally:
        now.stop()
    assert done.returncode == 3 and done.stderr.count("\n") == 1, done.stderr
    assert "REMOTE HOST IDENTIFICATION HAS CHANGED" in done.stderr and "ssh-rsa" in done.stderr
    assert f"ssh-keygen -R '[127.0.0.1]:{now.port}'" in done.stderr


@pytest.mark.parametrize(("target", "fragment"), [
    ("gpu:/no/such/run.log", "no such file"),
    ("no-such-host.invalid:/x.log", "cannot resolve"),
])
def test_errors_users_hit_are_one_line(ssh_world, target, fragment):
    home, _, _ = ssh_world
    done = rlwatch_as(home, "check", target)
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert done.stderr.startswith("rlwatch: ") and fragment in done.stderr, done.stderr


def test_refused_port_and_failed_authentication(ssh_world, tmp_path):
    home, gpu, _ = ssh_world
    stranger = ClientHome(tmp_path / "stranger")  # its key is not authorized on the box
    stranger.add_host("gpu", gpu.port)
    stranger.trust(gpu.known_hosts_line())
    denied = rlwatch_as(stranger, "check", f"gpu:{verl_log('036')}")
    assert denied.returncode == 3 and "authentication failed" in denied.stderr
    closed = Sshd(tmp_path / "closed", [home.public_key])  # configured, never started
    refused = rlwatch_as(home, "check", f"ssh://127.0.0.1:{closed.port}/x.log")
    # In the system's words, as ssh says it (asyncio's "Connect call failed ('127.0.0.1', N)" is not)
    assert refused.returncode == 3 and refused.stderr == "rlwatch: 127.0.0.1: cannot connect: Connection refused\n"


def test_a_passphrase_protected_key_without_a_terminal_says_what_to_do(ssh_world, tmp_path):
    _, gpu, _ = ssh_world
    home = ClientHome(tmp_path / "locked")
    os.remove(home.key)
    os.remove(home.key.with_name("id_ed25519.pub"))
    keygen(home.key, passphrase="correct horse")
    home.add_host("gpu", gpu.port)
    home.trust(gpu.known_hosts_line())
    done = rlwatch_as(home, "check", f"gpu:{verl_log('036')}")
    assert done.returncode == 3 and "ssh-add" in done.stderr and "Traceback" not in done.stderr


def test_a_line_still_being_written_is_read_once_and_whole(ssh_world, tmp_path):
    home, _, _ = ssh_world
    log = tmp_path / "grpo.log"
    log.write_bytes(verl_log("031").read_bytes() + b"step:999 - critic/score/mean:0.25 - actor/pg_loss:0.0")
    remote = json.loads(rlwatch_as(home, "check", f"gpu:{log}", "--json").stdout)
    local = json.loads(rlwatch_as(home, "check", str(log), "--json").stdout)
    assert comparable(remote) == comparable(local)
    assert remote["run"]["last_step"] == 999 and remote["latest"]["critic/score/mean"] == 0.25


def test_status_line_for_a_remote_target(ssh_world):
    home, _, _ = ssh_world
    remote = rlwatch_as(home, "status", f"gpu:{verl_log('034')}")
    local = rlwatch_as(home, "status", str(verl_log("034")))
    assert remote.stdout.count("\n") == 1 and "210/210" in remote.stdout, remote.stderr
    assert remote.stdout.split(" ", 1)[1] == local.stdout.split(" ", 1)[1]  # same but the run's name
    assert remote.returncode == local.returncode


def test_a_log_reached_through_a_symlink_is_read_whole(ssh_world, tmp_path):
    """``latest.log -> run_0412.log``: the box measures the file the link names (``stat`` of
    the link itself said 20-odd bytes, and the backfill read none of the log)."""
    home, _, _ = ssh_world
    shutil.copy(verl_log("032"), tmp_path / "run_0412.log")
    (tmp_path / "latest.log").symlink_to(tmp_path / "run_0412.log")
    remote = rlwatch_as(home, "check", f"gpu:{tmp_path / 'latest.log'}", "--json")
    local = rlwatch_as(home, "check", str(tmp_path / "run_0412.log"), "--json")
    assert comparable(json.loads(remote.stdout)) == comparable(json.loads(local.stdout)), remote.stderr
    assert json.loads(remote.stdout)["run"]["steps"] == 1120


def test_a_run_directory_offers_its_symlinked_logs_by_what_they_name(ssh_world, tmp_path):
    """A run directory whose newest log is a link to a file kept elsewhere (``logs/latest.log
    -> /scratch/run_0412.log``) is chosen by the file's age, as locally: the box's ``find
    -type f`` skipped the link, and ``stat`` without ``-L`` dated the link itself."""
    home, _, _ = ssh_world
    run, scratch = tmp_path / "run", tmp_path / "scratch"
    (run / "logs").mkdir(parents=True)
    scratch.mkdir()
    shutil.copy(verl_log("031"), run / "logs" / "older.log")
    shutil.copy(verl_log("032"), scratch / "run_0412.log")
    link = run / "logs" / "latest.log"
    link.symlink_to(scratch / "run_0412.log")
    (run / "logs" / "gone.log").symlink_to(scratch / "deleted.log")  # dangling: no candidate
    os.utime(run / "logs" / "older.log", (1_600_000_000, 1_600_000_000))
    os.utime(link, (1_500_000_000, 1_500_000_000), follow_symlinks=False)  # the link is older
    remote = rlwatch_as(home, "check", f"gpu:{run}", "--json")
    local = rlwatch_as(home, "check", str(run), "--json")
    assert json.loads(remote.stdout)["run"]["log"] == f"gpu:{link}", remote.stderr
    assert json.loads(local.stdout)["run"]["log"] == str(link)
    assert json.loads(remote.stdout)["run"]["steps"] == 1120


@pytest.mark.parametrize("kind", ["fifo", "device", "socket"])
def test_a_fifo_device_or_socket_on_the_box_is_refused_saying_what_it_is(ssh_world, tmp_path, kind):
    """Not "no such file": the path is there, and reading it would hang (a FIFO waits for a
    writer, /dev/zero never ends). Nothing on the box is opened to find out."""
    home, _, _ = ssh_world
    if kind == "fifo":
        path, said = tmp_path / "grpo.log", "is a FIFO (named pipe), not a regular file"
        os.mkfifo(path)
    elif kind == "device":
        path, said = tmp_path / "run.log", "is a character device, not a regular file"
        path.symlink_to("/dev/zero")
    else:
        path, said = tmp_path / "s.log", "is a socket, not a regular file"
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))
    done = rlwatch_as(home, "check", f"gpu:{path}")
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert done.stderr == f"rlwatch: gpu:{path}: {said} on gpu\n", done.stderr
