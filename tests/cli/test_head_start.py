"""A remote one-run check: the box starts its work while rlwatch imports the rest of itself."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.corpus import verl_log
from tests.sshd import ClientHome, Sshd, find_sshd
from tests.support import comparable, rlwatch_as

pytestmark = pytest.mark.skipif(find_sshd() is None, reason="OpenSSH's sshd is not installed")


@pytest.fixture
def box(tmp_path):
    """A client home and one sshd that logs the sessions it starts."""
    home = ClientHome(tmp_path / "home")
    server = Sshd(tmp_path / "box", [home.public_key], log_sessions=True).start()
    home.add_host("box", server.port)
    home.trust(server.known_hosts_line())
    yield home, server
    server.stop()


def test_the_box_starts_the_backfill_while_the_command_is_imported(box, tmp_path):
    # A stand-in for the command's module whose import ends only once the box has started the
    # run's session: were the connection made after the import, this would wait in vain.
    home, server = box
    probe = tmp_path / "probe" / "slow_command.py"
    probe.parent.mkdir()
    probe.write_text(textwrap.dedent(f"""
        import time
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if any("Starting session" in line for line in open({str(server.log)!r}, errors="replace")):
                break
            time.sleep(0.01)
        else:
            raise SystemExit("the box started nothing while the command was imported")
    """))
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(probe.parent)!r})
        from tui.cli.head_start import begin
        head = begin("box:{verl_log('032')}", None, False, "slow_command")
        print(head.run(head.connecting), head.connecting.done())
        head.close()
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=home.env(), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "True"]


def test_a_head_started_check_says_what_the_plain_one_says(box):
    home, _ = box
    log = str(verl_log("008"))  # crashed: its failure block is read by a range read too
    remote, local = rlwatch_as(home, "check", f"box:{log}", "--json"), rlwatch_as(home, "check", log, "--json")
    assert remote.returncode == local.returncode and remote.stderr == local.stderr == ""
    assert comparable(json.loads(remote.stdout)) == comparable(json.loads(local.stdout))


def test_a_command_that_stops_before_reading_leaves_nothing_behind(box, tmp_path):
    # A broken rules file stops the check after the login began: one line, no asyncio noise.
    home, _ = box
    done = rlwatch_as(home, "check", f"box:{verl_log('032')}", "--rules", str(tmp_path / "none.toml"))
    assert done.returncode == 3
    assert done.stderr.splitlines() == [f"rlwatch: {tmp_path / 'none.toml'}: No such file or directory"]
    refused = rlwatch_as(home, "check", "ssh://127.0.0.1:1/runs/x.log", "--rules", str(tmp_path / "none.toml"))
    assert refused.returncode == 3 and len(refused.stderr.splitlines()) == 1, refused.stderr


@pytest.mark.parametrize("target", ["/runs/x.log", "slurm://login/12", "ray+http://head:8265/raysubmit_1"])
def test_only_a_plain_host_path_is_begun_early(target):
    from tui.cli.head_start import begin

    assert begin(target, None, False, "json") is None
