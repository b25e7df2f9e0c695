"""The command line: help, version, and start-up that imports nothing heavy."""

import subprocess
import sys

from tests.support import packages_loaded_by
from tui import __version__

HEAVY = ("textual", "asyncssh", "tensorboard", "plotext", "pynvml", "rich")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True,
                          timeout=60)


def test_help_lists_every_command():
    done = run("--help")
    assert done.returncode == 0
    for command in ("check", "demo", "PATH"):
        assert command in done.stdout


def test_version():
    assert run("--version").stdout.strip() == f"rlwatch {__version__}"


def test_help_imports_no_heavy_library():
    code = ("import contextlib, io\n"
            "from tui.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: main(['--help'])\n"
            "    except SystemExit: pass")
    assert packages_loaded_by(code, HEAVY) == []


def test_check_imports_no_ui_library():
    assert packages_loaded_by("from tui.cli.check import run_check", HEAVY) == []


def test_options_before_the_target_are_taken_as_argparse_users_expect(tmp_path):
    """``rlwatch --theme rlwatch-light /runs/cola`` failed with ``invalid choice``; options go
    anywhere, before the command, between it and the target, or after."""
    from tests.corpus import verl_log

    log = verl_log("036")
    assert run("--log", str(log), "check", str(tmp_path)).returncode == 2  # loss-nan: critical
    assert run("--json", "check", str(log)).stdout.startswith("{")
    assert run("check", "--json", str(log)).stdout.startswith("{")
    # The dashboard's options before its target reach it (an unknown theme is said on stderr, with
    # the target then unreadable: exit 3 rather than argparse's 2 with "invalid choice").
    done = run("--theme", "rlwatch-light", "--accept-new-host-key", str(tmp_path / "missing"))
    assert "invalid choice" not in done.stderr and done.returncode == 3


def test_command_first_moves_the_command_and_reads_targets_as_watch():
    from tui.cli.main import _command_first, build_parser

    parser = build_parser()
    assert _command_first(parser, ["--theme", "t", "/r"]) == ["watch", "--theme", "t", "/r"]
    assert _command_first(parser, ["--log", "check", "report", "/r"]) == [
        "report", "--log", "check", "/r"]  # a value that reads like a command stays a value
    assert _command_first(parser, ["--help"]) == ["--help"]
    assert _command_first(parser, ["/r", "--gpus", "h"]) == ["watch", "--gpus", "h", "/r"]


# Exit statuses: every command exits like a monitoring plugin (tui/cli/exit_codes.py), where
# 1 is a warning and 2 critical; a command line that cannot be run is UNKNOWN, 3.

def test_a_bad_command_line_exits_3_not_argparses_2(tmp_path):
    from tests.corpus import verl_log

    log = str(verl_log("036"))
    for args in (["check", "-rf.log"], ["report", log, "--target", "abc"], ["check", "--bogus", log],
                 ["status"], ["frobnicate-nothing", "--json"]):
        done = run(*args)
        assert done.returncode == 3, (args, done.stderr)
        assert "error: " in done.stderr and "Traceback" not in done.stderr


def test_a_path_that_looks_like_an_option_is_told_to_go_after_dashes(tmp_path):
    done = run("check", "-rf.log")
    assert done.stderr.endswith("a path that begins with '-' goes after '--': rlwatch check -- -rf.log\n")
    done = run("demo", "--speed", "-1", "--bogus")  # a negative number is a value, not a path
    assert done.returncode == 3 and "-- -1" not in done.stderr


def test_an_output_that_cannot_be_written_exits_3_in_one_line(tmp_path):
    from tests.corpus import verl_log

    log = str(verl_log("036"))
    done = run("export", log, "--tensorboard", "/proc/nope")
    assert done.returncode == 3
    assert done.stderr == "rlwatch: /proc/nope: cannot write (No such file or directory)\n"
    done = run("report", log, "-o", "/proc/nope/report.md")
    assert done.returncode == 3
    assert done.stderr == "rlwatch: /proc/nope/report.md: cannot write (No such file or directory)\n"
