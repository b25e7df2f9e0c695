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
