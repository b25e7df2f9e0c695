"""The command line: help, version, and start-up that imports nothing heavy."""

import subprocess
import sys

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
    code = ("import sys, contextlib, io\n"
            "from tui.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: main(['--help'])\n"
            "    except SystemExit: pass\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_check_imports_no_ui_library():
    code = ("import sys\n"
            "from tui.cli.check import run_check\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
