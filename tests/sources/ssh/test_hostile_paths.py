"""Paths that try to be options or commands on the box: nothing on it may change.

A directory named ``-delete`` was once a ``find`` action on the box and emptied the user's
home; one named ``-print`` made rlwatch scan the whole home. Here every command rlwatch
builds for a box runs, on a real sshd, with names that try (a leading ``-``, find's
operators, newlines, quotes, globs, ``$()`` and backticks), and the box's own file list,
taken before and after, must be the same.

The box's login here starts in a sandbox folder (an ``authorized_keys`` ``command=`` that
changes into it and runs what was asked), so that a relative path means a file in it, as
one in the home would on a real box, and a regression empties the sandbox, not the home
of whoever runs the tests.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path

import asyncssh
import pytest

from tests.sshd import ClientHome, Sshd
from tests.support import rlwatch_as
from tui.parsers.log_scanner import NEEDLES
from tui.parsers.verl_jsonl import RECORD_START
from tui.parsers.verl_loggers import HINT_NEEDLES
from tui.sources.log_writers import scan_argv
from tui.sources.slurm import commands as slurm_commands
from tui.sources.ssh import remote_commands, remote_glob
from tui.sources.ssh.connection import connect
from tui.sources.ssh.ssh_runner import remote_command
from tui.sources.ssh.target import RemoteTarget
from tui.sources.tensorboard_events import EVENT_FILE_MARK

STEP = "step:{0} - critic/score/mean:0.{0} - actor/pg_loss:0.01 - timing_s/step:2.0\n"
# Names that a tool could read as an option or operator, or a shell as a command.
HOSTILE = ["-delete", "-print", "-exec", "-fprint", "!", "(", "-", "--", "a b", "new\nline",
           "it's \"quoted\"", "*", "[a]", "$(touch PWNED)", "`touch PWNED`", "x;touch PWNED", "$HOME", "~"]


def box_files(root: Path) -> dict[str, tuple[str, int, int]]:
    """What the box holds under ``root``: each entry's kind, size and modification time."""
    listing = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            stat = os.lstat(path)
            kind = "d" if name in dirs else "f"
            listing[os.path.relpath(path, root)] = (kind, stat.st_size if kind == "f" else 0,
                                                    stat.st_mtime_ns)
    return listing


def fill(sandbox: Path) -> None:
    """A home with a run in it, files that must survive, and a folder and a log for each
    hostile name (each folder holding a run of its own)."""
    (sandbox / ".ssh").mkdir()
    (sandbox / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA keep-me\n")
    (sandbox / "keep.txt").write_text("must survive\n")
    home_run = sandbox / "home_run"
    home_run.mkdir()
    (home_run / "train.log").write_text("".join(STEP.format(step) for step in range(1, 40)))
    for name in HOSTILE:
        folder = sandbox / name
        folder.mkdir()
        (folder / "run.log").write_text("".join(STEP.format(step) for step in range(1, 4)))
        (folder / "precious").write_text("must survive\n")
    (sandbox / "logs").mkdir()
    for name in HOSTILE:
        if name not in ("-", "--", "*", "?") and "/" not in name:
            (sandbox / "logs" / f"{name}.log").write_text(STEP.format(7))
    (sandbox / "-x.log").write_text(STEP.format(5))


@pytest.fixture(scope="module")
def sandbox_box(ssh_world, tmp_path_factory) -> Iterator[tuple[ClientHome, Path, Path]]:
    """A box (alias ``sandbox`` in the test client home) whose logins start in a folder of
    hostile names; returns the client home, that folder, and a folder outside it for markers
    an injection would make."""
    home = ssh_world[0]
    root = tmp_path_factory.mktemp("hostile")
    sandbox, outside = root / "box home", root / "outside"
    sandbox.mkdir()
    outside.mkdir()
    fill(sandbox)
    into = f'cd {shlex.quote(str(sandbox))} && exec "$SHELL" -c "$SSH_ORIGINAL_COMMAND"'
    box = Sshd(root / "sshd", ['command="' + into.replace('"', '\\"') + '" ' + home.public_key]).start()
    home.add_host("sandbox", box.port)
    home.trust(box.known_hosts_line())
    yield home, sandbox, outside
    box.stop()


@pytest.fixture
def sandbox_home(sandbox_box, client_home):
    """``sandbox_box``, with this process's ``~`` the client home (for in-process tests)."""
    return sandbox_box


def injections(outside: Path) -> list[str]:
    """Paths that would run a command making a file in ``outside`` if a shell read them."""
    marker = shlex.quote(str(outside / "PWNED"))
    return [f"$(touch {marker})", f"`touch {marker}`", f"x\ntouch {marker}", f"'; touch {marker}; '",
            f'"; touch {marker}; "']


# Every builder of a command sent to a box, each given a hostile path the way rlwatch gives
# it one; the test below fails when a builder is added without being listed here.
BUILDERS: dict[str, Callable[[str], str]] = {
    "remote_commands.discover": lambda path: remote_commands.discover(path),
    "remote_commands.discover+backfill": lambda path: remote_commands.discover(path, NEEDLES, 1024,
                                                                               ["echo asked"]),
    "remote_commands.backfill": lambda path: remote_commands.backfill(
        path, NEEDLES, 1024, 0, [remote_commands.head_as_stamped('"$f"', 64)]),
    "remote_commands.backfill resumed": lambda path: remote_commands.backfill(path, NEEDLES, 1024, 10,
                                                                              head_bytes=64),
    "remote_commands.read_range": lambda path: remote_commands.read_range(path, 0, 100),
    "remote_commands.read_range to the end": lambda path: remote_commands.read_range(path, 0, None),
    "remote_commands.read_from": lambda path: remote_commands.read_from(path, 0),
    "remote_commands.follow": lambda path: remote_commands.follow(path, 0),
    "remote_commands.follow resumed": lambda path: remote_commands.follow(path, 10, ("1:2", "64", "123")),
    "remote_commands.list_files": lambda path: remote_commands.list_files([path, "logs"], 3, ["*.log"]),
    "remote_commands.list_logger_files": lambda path: remote_commands.list_logger_files(
        path, 3, RECORD_START, EVENT_FILE_MARK),
    "remote_commands.hint_lines": lambda path: remote_commands.hint_lines(path, HINT_NEEDLES),
    "remote_glob.expand_command": lambda path: remote_glob.expand_command(path),
    "remote_glob.expand_command (in a folder)": lambda path: remote_glob.expand_command(f"{path}/*"),
    "ssh_runner.remote_command": lambda path: remote_command(["ls", "-d", "--", path]),
    "log_writers.scan_argv": lambda path: remote_command(scan_argv(path, 0)),
    "slurm.commands.user_jobs": lambda path: slurm_commands.user_jobs(),
    # A job id is digits by the time it gets here (tui.sources.slurm.target); hostile all the same.
    "slurm.commands.job_query": lambda path: slurm_commands.job_query(path),
}
# Functions of remote_commands that build no command of their own: the guard itself, and
# builders of a part that take an already quoted shell word (the backfill's ``"$f"``, asked
# beside it as above).
NOT_BUILDERS = {"operand", "hint_lines_of", "head_as_stamped"}


def test_every_builder_of_remote_commands_is_walked():
    builders = {name for name, function in inspect.getmembers(remote_commands, inspect.isfunction)
                if function.__module__ == remote_commands.__name__ and not name.startswith("_")}
    walked = {name.split(".", 1)[1].split(" ")[0].split("+")[0] for name in BUILDERS
              if name.startswith("remote_commands.")}
    assert builders - NOT_BUILDERS == walked


async def run_on_box(connection: asyncssh.SSHClientConnection, command: str, stdin: bytes = b"\n"
                     ) -> bytes:
    """``command``'s output, ``stdin`` written to it and then closed (one empty line: a follower
    ends with its channel; the discovery reads the chosen log from it)."""
    process = await connection.create_process(command, encoding=None)
    process.stdin.write(stdin)
    process.stdin.write_eof()
    try:
        stdout, _ = await asyncio.wait_for(process.communicate(), 120)
    finally:
        process.close()
    return stdout


async def test_no_builder_changes_the_box_or_runs_what_a_path_says(sandbox_home):
    """Each builder's commands for every hostile path, in one channel per builder (a login
    costs the box most of a second here): each in a session of its own (``setsid``), since a
    backfill ends its process group when its stdin closes, as it does with its channel."""
    _, sandbox, outside = sandbox_home
    before = box_files(sandbox)
    paths = HOSTILE + ["-x.log", "logs/-delete.log", "logs/new\nline.log"] + injections(outside)
    connection = await connect(RemoteTarget("sandbox", "."), False)
    gate = asyncio.Semaphore(6)

    async def walk(build: Callable[[str], str]) -> bytes:
        script = "".join(f"printf '\\n' | setsid -w \"$SHELL\" -c {shlex.quote(build(path))} "
                         ">/dev/null 2>&1\n" for path in paths)
        async with gate:  # too long for a command line: sh reads it from its stdin
            return await run_on_box(connection, "exec sh", (script + "echo walked\n").encode())

    try:
        walked = await asyncio.gather(*(walk(build) for build in BUILDERS.values()))
    finally:
        connection.close()
    assert walked == [b"walked\n"] * len(BUILDERS)
    assert box_files(sandbox) == before
    assert list(outside.iterdir()) == []


async def test_a_folder_named_like_an_option_is_listed_as_a_folder(sandbox_home):
    """Not the home's runs (``-print``), not an error (``-exec``): the folder's own log."""
    _, sandbox, _ = sandbox_home
    connection = await connect(RemoteTarget("sandbox", "."), False)
    try:
        for name in ("-print", "-exec", "!", "("):
            listing = await run_on_box(connection, remote_commands.discover(name))
            head, _, records = listing.partition(b"\n")
            assert head == b"DIR"
            paths = [record.split(b" ", 2)[2] for record in records.split(b"\0CHOOSE\0")[0].split(b"\0")
                     if record]
            assert paths == [f"./{name}/run.log".encode()]
        assert await run_on_box(connection, remote_commands.read_range("-x.log", 0, None)) \
            == (sandbox / "-x.log").read_bytes()
    finally:
        connection.close()


@pytest.mark.parametrize("name", ["-delete", "-print", "-exec", "!"])
def test_check_of_a_folder_named_like_an_option_reads_it_and_changes_nothing(sandbox_box, name):
    home, sandbox, _ = sandbox_box
    before = box_files(sandbox)
    done = rlwatch_as(home, "check", f"sandbox:{name}", "--json")
    assert box_files(sandbox) == before
    result = json.loads(done.stdout)
    assert (result["run"]["log"], result["run"]["last_step"]) == (f"sandbox:./{name}/run.log", 3)


def test_check_of_a_glob_over_the_home_changes_nothing(sandbox_box):
    home, sandbox, _ = sandbox_box
    before = box_files(sandbox)
    done = rlwatch_as(home, "check", "sandbox:*", "--json")
    assert box_files(sandbox) == before
    results = json.loads(done.stdout)
    assert {result["name"] for result in results} >= {"-delete", "-print", "home_run"}
    home_run = next(result for result in results if result["name"] == "home_run")
    assert home_run["run"]["last_step"] == 39
