"""What the tests share: waiting, import hygiene, and driving the dashboard on real logs.

One module, so a test file never imports another test file for its helpers.
"""

from __future__ import annotations

import ast
import asyncio
import re
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

from tests.corpus import verl_log
from tui.session.run_session import RunSession
from tui.sources.base import LogSource
from tui.sources.local_file import LocalFile
from tui.ui.app import RlwatchApp
from tui.ui.appearance import Appearance
from tui.ui.widgets.metric_panel import MetricPanel, PanelStats

RUN = verl_log("032")  # a whole real GRPO run: step lines, sample dumps, validation


async def until(condition: Callable[[], object], timeout: float = 5.0, what: str = "the condition",
                pause: Callable[[float], Awaitable[object]] = asyncio.sleep) -> float:
    """Look at ``condition`` every 10 ms until it is true; return how long that took.

    Bounded: past ``timeout`` it fails with what it waited for, so a hang fails
    the test rather than stalling the suite.
    """
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await pause(0.01)
    return time.monotonic() - start


def packages_loaded_by(code: str, packages: Iterable[str]) -> list[str]:
    """Run ``code`` in a new Python; which of the top-level ``packages`` are then imported, sorted."""
    probe = (f"{code}\nimport sys\n"
             f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(packages)!r}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip())


def step_lines(count: int) -> list[bytes]:
    """The first ``count`` step lines of the real run."""
    lines = [line for line in RUN.read_bytes().splitlines(keepends=True) if line.startswith(b"step:")]
    return lines[:count]


def metric(line: bytes, key: str) -> float:
    """One value from a step line, for the expectations (the app parses on its own)."""
    return float(re.search(re.escape(key.encode()) + rb":([-0-9.e]+)", line).group(1))


def text_of(widget: Widget) -> str:
    """What the widget draws itself (border, titles and its own content), as plain text."""
    width, height = widget.outer_size
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, width, height)))


def header_text(app: RlwatchApp) -> str:
    return text_of(app.dashboard.header)


def shown_step(app: RlwatchApp) -> str | None:
    """The ``step N[/total]`` the header shows, or None before the first step."""
    match = re.search(r"\bstep (\S+)", header_text(app))
    return match.group(1) if match else None


def panel(app: RlwatchApp, concept_id: str) -> MetricPanel:
    return app.dashboard.query_one(f"#panel-{concept_id}", MetricPanel)


def stats_text(app: RlwatchApp, concept_id: str) -> str:
    return text_of(panel(app, concept_id).query_one(PanelStats))


async def wait_for(pilot: Pilot[None], condition: Callable[[], object], what: str,
                   timeout: float = 5.0) -> None:
    """``until``, for a running app: between looks the pilot lets the app handle its messages."""
    await until(condition, timeout, what, pause=pilot.pause)


class RecordingApp(RlwatchApp):
    """The real app, counting the bells it rings (a BEL is invisible to the pilot)."""

    bells = 0

    def bell(self) -> None:
        self.bells += 1


def dashboard_on(source: LogSource, *, app: type[RlwatchApp] = RlwatchApp,
                 appearance: Appearance | None = None, name: str | None = None,
                 **session: Any) -> RlwatchApp:
    """The app on one session over ``source`` (``session``: RunSession's options), as
    ``rlwatch PATH`` builds it; ``app`` another class of it (``RecordingApp``)."""
    return app([RunSession(source, **session)], name=name, appearance=appearance)


def open_app(path: Path) -> RlwatchApp:
    """The app following the log at ``path`` (polled quickly, so tests wait little)."""
    return dashboard_on(LocalFile(path, poll_seconds=0.05))


def healthy_then_nan(tmp_path: Path) -> tuple[Path, bytes]:
    """032's first 30 real step lines (entropy below 0.1 later, KL above 0.03), then a nan loss."""
    lines = step_lines(30)
    nan_line = lines[-1].replace(b"step:30 ", b"step:31 ", 1)
    nan_line = nan_line.replace(b"actor/pg_loss:", b"actor/pg_loss:nan - was/pg_loss:", 1)
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(lines))
    return log, nan_line
