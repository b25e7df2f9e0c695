"""Remote runs read through the login shells users really have, whose start-up files print.

One real sshd (``tests.login_shells``) has an account per shell (bash, dash, zsh,
fish, tcsh, BusyBox ash), each greeting on stdout and stderr with lines shaped
like rlwatch's answers; an ordinary user's account (EACCES is real for it), an
account whose shell is ``nologin``, and one whose PATH has no grep. Through each
shell: ``check`` with the accelerator poll (a recorded H100's nvidia-smi on the
account's PATH), the dashboard's follow, the box clock and a remote glob.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.corpus import verl_log
from tests.login_shells import SHELLS, STARTUP_FILES, can_have_accounts, chatty_box
from tests.sources.accelerators.conftest import H100_REAL
from tests.sources.accelerators.replay import install
from tests.sshd import ClientHome, Sshd
from tests.support import dashboard_on, following, header_text, rlwatch_as, step_lines, until, wait_for
from tui.parsers.log_scanner import NEEDLES
from tui.sources.base import SourceError, Status
from tui.sources.ssh import box_shell, remote_glob
from tui.sources.ssh.connection import reconnect_delay
from tui.sources.ssh.pool import ConnectionPool
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget

NOBODY = 65534


class World:
    """The client home, the chatty box, and a folder of files every account can reach."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = ClientHome(root / "client")
        self.files = root / "files"
        self.files.mkdir()
        install(root / "bin", "nvidia-smi", H100_REAL)
        nogrep = root / "nogrep"
        nogrep.mkdir()
        for tool in Path("/usr/bin").iterdir():
            if "grep" not in tool.name:
                (nogrep / tool.name).symlink_to(tool)
        self.box: Sshd = chatty_box(root / "box", self.home.public_key,
                                    path=f"{root / 'bin'}:/usr/bin:/bin")
        self.box.accounts.update({"rlw-user": shutil.which("bash") or "/bin/bash",
                                  "rlw-nologin": "/usr/sbin/nologin",
                                  "rlw-nogrep": shutil.which("bash") or "/bin/bash"})
        self.box.account_uids["rlw-user"] = NOBODY
        # The ordinary user has no GPU tool (the recorded one runs this venv's Python).
        for account, bashrc in (("rlw-user", "PATH=/usr/bin:/bin\n" + STARTUP_FILES["bash"][".bashrc"]),
                                ("rlw-nogrep", f"export PATH={nogrep}\n")):
            self.box.home_of(account).mkdir(parents=True)
            (self.box.home_of(account) / ".bashrc").write_text(bashrc)
        self.box.start()
        for account in [*(f"rlw-{shell}" for shell in SHELLS), "rlw-user", "rlw-nologin", "rlw-nogrep"]:
            self.home.add_host(account.replace("rlw-", "chatty-"), self.box.port, user=account)
        self.home.trust(self.box.known_hosts_line())


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    if not can_have_accounts():
        pytest.skip("accounts of their own need root and unshare")
    # Under /tmp, open to all: the ordinary user's sshd reads authorized_keys as that user.
    root = Path(tempfile.mkdtemp(prefix="rlwatch-shells-"))
    root.chmod(0o755)
    made = World(root)
    yield made
    made.box.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def as_client(world, monkeypatch) -> World:
    """This process's ``~`` pointed at the world's client home (no agent)."""
    monkeypatch.setenv("HOME", str(world.home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return world


@pytest.fixture(scope="module")
def run_log(world) -> Path:
    log = world.files / "run.log"
    log.write_bytes(verl_log("036").read_bytes())
    return log


@pytest.fixture(scope="module")
def local_report(world, run_log) -> dict:
    done = rlwatch_as(world.home, "check", str(run_log), "--json")
    return json.loads(done.stdout)


@pytest.mark.parametrize("shell", SHELLS)
def test_check_reads_the_run_and_its_gpus_whatever_the_login_shell(world, run_log, local_report, shell):
    done = rlwatch_as(world.home, "check", f"chatty-{shell}:{run_log}", "--json")
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)
    assert report["run"]["steps"] == local_report["run"]["steps"] > 0
    assert report["latest"] == local_report["latest"]
    assert report["findings"] == local_report["findings"]
    (gpu,) = report["accelerators"]
    assert "H100" in gpu["name"] and gpu["mem_total_mib"] == 81559


@pytest.mark.parametrize("shell", SHELLS)
async def test_follow_clock_and_glob_whatever_the_login_shell(as_client, shell):
    lines = step_lines(5)
    log = as_client.files / f"follow-{shell}.log"
    log.write_bytes(b"".join(lines[:3]))
    written = time.time() - 7200
    os.utime(log, (written, written))
    async with following(log, host=f"chatty-{shell}") as model:
        await until(lambda: model.step_count == 3, 10, "the backfill")
        # The box's CLOCK line, not the greeting's, dated the log: two hours old.
        assert model.last_write_at is not None and abs(model.last_write_at - written) < 5
        with open(log, "ab") as handle:
            handle.write(b"".join(lines[3:]))
        await until(lambda: model.step_count == 5, 10, "the followed steps")
    pool = ConnectionPool()
    try:
        found = await remote_glob.expand(pool, RemoteTarget(f"chatty-{shell}", str(log)[:-5] + "*"))
    finally:
        await pool.close()
    assert [target.path for target in found] == [str(log)]


def _check_error(world: World, account: str, path: Path | str) -> str:
    done = rlwatch_as(world.home, "check", f"chatty-{account}:{path}")
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("rlwatch: ") and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


def test_permission_denied_only_where_the_file_is_unreadable(world, run_log):
    secret = world.files / "secret.log"
    secret.write_bytes(run_log.read_bytes())
    secret.chmod(0o600)
    assert "permission denied" in _check_error(world, "user", secret)
    locked = world.files / "locked"
    locked.mkdir(mode=0o700)
    (locked / "run.log").write_bytes(run_log.read_bytes())
    assert "permission denied" in _check_error(world, "user", locked / "run.log")
    assert "no such file" in _check_error(world, "user", world.files / "nope.log")


def test_a_path_under_a_file_is_not_a_directory(world, run_log):
    assert "not a directory" in _check_error(world, "user", run_log / "grpo.log")


def test_a_file_with_no_training_output_is_said_to_be_no_training_log(world):
    notes = world.files / "notes.txt"
    notes.write_text("shopping list\nmilk\n")
    assert "not a training log" in _check_error(world, "user", notes)


def test_a_login_shell_that_never_runs_the_command_is_shown(world, run_log):
    said = _check_error(world, "nologin", run_log)
    assert "the login shell printed something we could not read past" in said
    assert "This account is currently not available." in said


def test_a_box_without_grep_says_so(world, run_log):
    assert "chatty-nogrep: command not found: grep" in _check_error(world, "nogrep", run_log)


@pytest.mark.parametrize(("forced", "shown"), [
    ("sleep 1000", None),
    ("echo Enter your OTP:; sleep 1000", "; its login shell printed 'Enter your OTP:␊' and then nothing"),
])
async def test_a_box_that_takes_the_login_and_never_answers_is_named(as_client, run_log, monkeypatch,
                                                                     forced, shown):
    """``command="…"`` in authorized_keys: the login works, nothing ever answers (or a line,
    then nothing, as a start-up file waiting for a terminal)."""
    from tests.sshd import keygen

    key = as_client.root / f"silent_key{len(forced)}"
    silent = Sshd(as_client.root / f"silent{len(forced)}", [f'command="{forced}" {keygen(key)}']).start()
    try:
        alias = f"silent{silent.port}"
        as_client.home.add_host(alias, silent.port, extra=f"IdentityFile {key}")
        as_client.home.trust(silent.known_hosts_line())
        monkeypatch.setattr(box_shell, "MARKER_DEADLINE_S", 3.0)  # a loaded machine: the greeting in time
        source = RemoteLog(RemoteTarget(alias, str(run_log)), [b"step:"])
        started = time.monotonic()
        with pytest.raises(SourceError) as raised:
            await asyncio.wait_for(source.connect(), 20)  # bounded: it used to hang for good
        assert time.monotonic() - started < 10
        said = str(raised.value)
        assert said.startswith(f"{alias}: logged in, but the box did not answer within 3 s"), said
        assert (shown in said) if shown else "printed" not in said, said
        assert "\n" not in said
        await source.close()
    finally:
        silent.stop()


@pytest.mark.parametrize(("shell", "outage_s"), [("bash", 8.0), ("tcsh", 1.0)])
async def test_a_restarted_sshd_is_rejoined_within_seconds_losing_nothing(as_client, shell, outage_s):
    """Down long enough for the back-off to pass 4 s (bash), or a quick restart (tcsh): the
    box refuses connections meanwhile, so it is asked every second and rejoined at once."""
    lines = step_lines(8)
    log = as_client.files / f"restart-{shell}.log"
    log.write_bytes(b"".join(lines[:3]))
    statuses: list[Status] = []
    async with following(log, statuses.append, host=f"chatty-{shell}") as model:
        await until(lambda: model.step_count == 3, 10, "the backfill")
        as_client.box.stop()
        await until(lambda: any(not s.ok for s in statuses), 10, "the drop noticed")
        with open(log, "ab") as handle:  # written while the box is away
            handle.write(b"".join(lines[3:6]))
        await asyncio.sleep(outage_s)
        as_client.box.start()
        back = time.monotonic()
        await until(lambda: model.step_count == 6, 10, "the steps written meanwhile")
        assert time.monotonic() - back < 5
        with open(log, "ab") as handle:
            handle.write(b"".join(lines[6:]))
        await until(lambda: model.step_count == 8, 10, "the steps written after")
    assert list(model.series["critic/score/mean"].steps) == list(range(1, 9))  # none lost, none twice
    said = [s.text for s in statuses if not s.ok]
    assert said[0].startswith(f"reconnecting to chatty-{shell} (attempt 1): connection lost ("), said
    assert re.search(rf"^reconnecting to chatty-{shell} \(attempt [2-9], next in 1s\): "
                     r"still no connection \(.*cannot connect", said[-1]), said


def test_reconnect_pauses_start_at_once_then_double_from_a_second_to_a_cap():
    assert [reconnect_delay(failures) for failures in range(8)] == [0, 1, 2, 4, 8, 15, 15, 15]
    # Refused: nothing listens, which costs the box nothing to ask again each second.
    assert [reconnect_delay(failures, refused=True) for failures in range(4)] == [0, 1, 1, 1]


def test_every_command_for_the_box_starts_through_box_shell():
    """The guard for the whole class: no module but ``box_shell`` opens a channel that runs a
    command, so none can skip the greeting, the deadline or the tool check."""
    sources = Path(__file__).resolve().parents[3] / "tui"
    opens = re.compile(r"\.create_(process|session)\(|\.run\([^\n]*encoding=")
    direct = sorted(str(path.relative_to(sources)) for path in sources.rglob("*.py")
                    if path.name != "box_shell.py" and opens.search(path.read_text()))
    assert direct == []


async def test_a_box_whose_bin_sh_is_busybox_reads_the_script_and_its_input_apart(as_client, tmp_path):
    """BusyBox ash as /bin/sh itself (Alpine, embedded boxes): it reads the script from the
    pipe, then the chosen log's path written later on the same stdin (a run directory's
    opening) and the follower's end of input: neither is taken for script."""
    busybox = shutil.which("busybox") or "/bin/busybox"
    box = Sshd(as_client.root / "ash-box", [as_client.home.public_key], bin_sh=busybox).start()
    try:
        as_client.home.add_host("ashbox", box.port)
        as_client.home.trust(box.known_hosts_line())
        lines = step_lines(5)
        run = as_client.files / "ash-run"
        run.mkdir()
        (run / "train.log").write_bytes(b"".join(lines[:3]))
        notes: list[str] = []
        async with following(run, host="ashbox", notes=notes) as model:
            await until(lambda: model.step_count == 3, 10, "the backfill")
            with open(run / "train.log", "ab") as handle:
                handle.write(b"".join(lines[3:]))
            await until(lambda: model.step_count == 5, 10, "the followed steps")
        assert notes and "train.log" in notes[0]
    finally:
        box.stop()


async def test_the_dashboards_header_says_which_attempt_and_when_the_next(as_client):
    """The real app on a zsh account's run: its sshd stops, the header says
    ``reconnecting to HOST (attempt N, next in Ns)`` first (a long status is cut at the
    header's width); it comes back, the header says so."""
    log = as_client.files / "header.log"
    log.write_bytes(b"".join(step_lines(3)))
    source = RemoteLog(RemoteTarget("chatty-zsh", str(log)), NEEDLES)
    await source.connect()
    app = dashboard_on(source, watch_accelerators=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.session.model.step_count == 3, "the backfill", timeout=10)
        as_client.box.stop()
        try:
            await wait_for(pilot, lambda: re.search(r"reconnecting to chatty-zsh \(attempt [2-9], next in 1s\)",
                                                    header_text(app)), "the attempts", timeout=10)
        finally:
            as_client.box.start()
        await wait_for(pilot, lambda: "reconnected to chatty-zsh" in header_text(app), "the rejoin",
                       timeout=5)
    await source.close()
