"""A FIFO, a device or a link to one named as a log, a rule file or a settings file: one line
saying what it is and exit 3 (could not read), never a hang. Each command runs as a real process
with a timeout, so a hang fails the test (``subprocess.TimeoutExpired``) instead of blocking it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import step_lines
from tui.cli import exit_codes

# Long enough for a cold start on a busy machine; a hang is forever.
HANG_S = 30


def run(home: Path, *args: str) -> subprocess.CompletedProcess:
    """``rlwatch ARGS`` with its own HOME (its own ~/.config/rlwatch), stdin closed."""
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True,
                          timeout=HANG_S, env=env, stdin=subprocess.DEVNULL)


def said(done: subprocess.CompletedProcess) -> str:
    """What the command told the user (status speaks on stdout, the rest on stderr)."""
    return done.stdout + done.stderr


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "grpo.log"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", [["check"], ["status"], ["report"], ["watch"],
                                     ["export", "--tensorboard", "tb"]])
def test_a_fifo_as_the_target_is_refused_by_every_command(tmp_path, fifo, command):
    done = run(tmp_path, command[0], str(fifo), *command[1:])
    assert done.returncode == exit_codes.UNREADABLE, said(done)
    assert said(done) == f"rlwatch: {fifo}: is a FIFO (named pipe), not a regular file\n"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_the_target_is_refused(tmp_path, device):
    link = tmp_path / "run.log"
    link.symlink_to(device)
    for target in (device, str(link)):
        done = run(tmp_path, "check", target)
        assert done.returncode == exit_codes.UNREADABLE
        assert done.stderr == f"rlwatch: {target}: is a character device, not a regular file\n"


def test_a_fifo_in_a_run_directory_is_passed_over_for_the_real_log(tmp_path):
    run_dir = tmp_path / "cola"
    run_dir.mkdir()
    (run_dir / "train.log").write_bytes(b"".join(step_lines(3)))
    os.mkfifo(run_dir / "zz-newer.log")  # newest, and a *.log: discovery must not open it
    for pipe in ("rollouts.jsonl", "events.out.tfevents.1.host"):
        os.mkfifo(run_dir / pipe)
    done = run(tmp_path, "check", str(run_dir))
    assert done.returncode == exit_codes.OK, said(done)
    assert "train.log" in done.stderr and "step 3" in done.stdout


def test_a_rule_file_linked_to_dev_zero_is_refused(tmp_path):
    (tmp_path / "log").write_bytes(b"".join(step_lines(3)))
    rules = tmp_path / "rules.toml"
    rules.symlink_to("/dev/zero")
    for command in ("check", "rules"):
        done = run(tmp_path, command, *(["log"] if command == "check" else []), "--rules", str(rules))
        assert done.returncode == exit_codes.UNREADABLE
        assert done.stderr == f"rlwatch: {rules}: is a character device, not a regular file\n"


def test_the_users_rule_and_settings_files_as_fifos_do_not_hang(tmp_path):
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(3)))
    config = tmp_path / ".config" / "rlwatch"
    config.mkdir(parents=True)
    os.mkfifo(config / "config.toml")  # settings never stop a command: reported or ignored
    os.mkfifo(config / "rules.toml")
    done = run(tmp_path, "status", str(log))
    assert done.returncode == exit_codes.UNREADABLE
    assert done.stdout == f"rlwatch: {config / 'rules.toml'}: is a FIFO (named pipe), not a regular file\n"
    (config / "rules.toml").unlink()
    done = run(tmp_path, "status", str(log))
    assert done.returncode == exit_codes.OK and " 3 reward " in done.stdout, said(done)


def test_a_rule_file_that_is_not_utf8_is_one_line_naming_file_and_byte(tmp_path):
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(3)))
    config = tmp_path / ".config" / "rlwatch"
    config.mkdir(parents=True)
    rules = config / "rules.toml"
    text = b'[[rule]]\nid = "reward-collapse"\nexplain = "caf\xe9"\n'  # Latin-1, not UTF-8
    rules.write_bytes(text)
    expected = (f"rlwatch: {rules}: not UTF-8 text: byte 0xe9 at offset {text.index(0xe9)} (line 3); "
                "save it as UTF-8\n")
    for command in ("check", "rules", "report"):  # every command reads the user's rules
        done = run(tmp_path, command, *([str(log)] if command != "rules" else []))
        assert done.returncode == exit_codes.UNREADABLE and done.stderr == expected, said(done)
    done = run(tmp_path, "status", str(log))  # tmux's status line: a short line, not a traceback
    assert done.returncode == exit_codes.UNREADABLE and done.stdout == expected
    assert done.stderr == ""


def test_fifos_named_as_logger_files_are_refused_or_passed_over(tmp_path):
    events = tmp_path / "events.out.tfevents.1700000000.host"
    os.mkfifo(events)
    done = run(tmp_path, "check", str(events))
    assert done.returncode == exit_codes.UNREADABLE
    assert done.stderr == f"rlwatch: {events}: is a FIFO (named pipe), not a regular file\n"
    board = tmp_path / "tensorboard_log" / "proj" / "exp"
    board.mkdir(parents=True)
    os.mkfifo(board / "events.out.tfevents.1700000000.host")
    done = run(tmp_path, "check", str(tmp_path / "tensorboard_log"))
    assert done.returncode == exit_codes.UNREADABLE and "not a training log?" in done.stderr
