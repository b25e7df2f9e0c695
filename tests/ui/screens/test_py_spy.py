"""``y`` in the failure view: a py-spy dump of the trainer still running after a failure (a
worker died, the driver hangs), by the real py-spy where it is installed, shown inert; and
where it is not, why there is none."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.session.test_process_states import hung_trainer
from tests.ui.test_dashboard import open_app, text_of, wait_for
from tui.ui.screens.failure import FailureScreen
from tui.ui.screens.py_spy import PySpyScreen

# A worker's traceback after step 3, with an escape sequence in its text; the driver hangs on.
CRASH = ("Traceback (most recent call last):\n  File \"worker.py\", line 3, in <module>\n"
         "RuntimeError: reward worker died \x1b]0;owned\x07\n")


def said(app, words: str) -> bool:
    """Whether a notice on screen holds ``words``."""
    return any(words in str(notice.message) for notice in app._notifications)


async def open_failure(pilot, app) -> None:
    await wait_for(pilot, lambda: any(f.rule == "crash" for f in app.findings), "the crash finding", timeout=15)
    await pilot.press("w")
    await wait_for(pilot, lambda: isinstance(app.screen, FailureScreen), "the failure", timeout=15)


async def test_y_shows_the_trainers_stacks_by_py_spy(tmp_path: Path, monkeypatch) -> None:
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(py_spy).exists():
        pytest.skip("py-spy is not installed here (the test extras install it)")
    monkeypatch.setenv("PATH", f"{Path(py_spy).parent}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "run.log"
    with hung_trainer(log, then=CRASH) as trainer:
        app = open_app(log)
        async with app.run_test(size=(100, 30)) as pilot:
            await open_failure(pilot, app)
            await pilot.press("y")
            await wait_for(pilot, lambda: isinstance(app.screen, PySpyScreen) or said(app, "py-spy on "),
                           "the dump", timeout=30)
            if said(app, "Permission denied") or said(app, "ptrace"):
                pytest.skip("ptrace of a child is not permitted here: py-spy says so")
            title = text_of(app.screen.query_one("#title")).strip()
            dump = text_of(app.screen.query_one("#dump"))
    assert title == f"py-spy dump --pid {trainer.pid} on {app.session.source.accelerator_host().name} " \
                    "(the trainer, by the log's process prefix)"
    assert f"Process {trainer.pid}:" in dump and "<module> (<string>:10)" in dump
    # py-spy prints the process's command line, the traceback's text in it: shown, inert
    assert "␛]0;owned␇" in dump and "\x1b" not in dump


async def test_y_without_py_spy_says_rlwatch_installs_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    if shutil.which("py-spy"):
        pytest.skip("py-spy is installed system-wide here")
    log = tmp_path / "run.log"
    with hung_trainer(log, then=CRASH):
        app = open_app(log)
        async with app.run_test(size=(100, 30)) as pilot:
            await open_failure(pilot, app)
            await pilot.press("y")
            await wait_for(pilot, lambda: said(app, "never installs anything"), "the notice", timeout=15)
            assert isinstance(app.screen, FailureScreen)
