"""Keypress to redrawn screen, measured at the terminal, with every dashboard panel showing
100,000 points.

The real app runs in a child process on a pseudo-terminal of 160×48 (not Textual's headless
pilot, whose own waits cost about 90 ms a press and which skips writing frames), on a model of
100,000 steps × 150 metrics. Each sample types ``?``, which opens the help over the dashboard and,
typed again, closes it (the eight sparkline panels are drawn again), and times the bytes the app
writes back until the terminal stays quiet: from the key to the last byte of the redrawn screen.
The header redraws itself once a second (the time since the last step), so each key is typed just
after such a redraw and a sample that ran into the next one is taken again. The baseline is the
same keys on an empty run.

The redraw after a new step is timed inside the app (``show_model``), also on 100,000 points.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import select
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.synthetic import fill_model  # noqa: E402
from bench.table import Row  # noqa: E402
from tui.model.aliases import DASHBOARD_CONCEPTS  # noqa: E402
from tui.session.run_session import RunSession  # noqa: E402
from tui.sources.local_file import LocalFile  # noqa: E402

SIZE = (160, 48)
# No output for this long: the screen is drawn.
QUIET_S = 0.1
# How long the app may take to draw and judge the run before the first key.
SETTLE_S = 10.0


def _run_app(steps: int, log: Path) -> None:
    """In the child: the real app on this pseudo-terminal, on ``steps`` synthetic steps."""
    from tui.ui.app import RlwatchApp

    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
    os.environ.update(TERM="xterm-256color", COLORTERM="truecolor")
    app = RlwatchApp([RunSession(LocalFile(log))])
    if steps:
        fill_model(steps, model=app.model)
    app.run()


class Terminal:
    """The parent's side of the pseudo-terminal: what the app wrote, and when."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.bytes_read = 0  # all the app wrote so far

    def read_until_quiet(self, quiet: float = QUIET_S, limit: float = 5.0) -> float | None:
        """Read until nothing comes for ``quiet`` seconds; the time of the last byte (None: none)."""
        last = None
        deadline = time.perf_counter() + limit
        while time.perf_counter() < deadline:
            ready, _, _ = select.select([self.fd], [], [], quiet)
            if not ready:
                return last
            try:
                data = os.read(self.fd, 1 << 16)
            except OSError:  # the child is gone
                return last
            if not data:
                return last
            self.bytes_read += len(data)
            last = time.perf_counter()
        return last

    def wait_for_output(self, limit: float) -> bool:
        """True when the app writes something within ``limit`` seconds (a redraw of its own)."""
        ready, _, _ = select.select([self.fd], [], [], limit)
        return bool(ready)


@contextmanager
def app_on_terminal(steps: int, first_draw_s: float) -> Iterator[tuple[int, Terminal]]:
    """The app on ``steps`` synthetic steps, in a child on a pseudo-terminal: (its fd, the
    terminal reader) once it has drawn and judged; the child is stopped on leaving."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "idle.log"
        log.write_bytes(b"")
        pid, fd = pty.fork()
        if pid == 0:  # the child
            try:
                _run_app(steps, log)
            finally:
                os._exit(0)
        terminal = Terminal(fd)
        try:
            if not terminal.wait_for_output(first_draw_s):  # the model is built before the app starts
                raise RuntimeError("the app drew nothing")
            terminal.read_until_quiet(quiet=3.0, limit=SETTLE_S)  # drawn and judged
            yield fd, terminal
        finally:
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
            os.close(fd)


def press_times(steps: int, presses: int = 40) -> list[float]:
    """Latencies (s) from typing ``?`` to the last byte of the redrawn screen."""
    with app_on_terminal(steps, 120) as (fd, terminal):
        times: list[float] = []
        while len(times) < presses:
            if terminal.wait_for_output(1.2):  # the once-a-second redraw, if any: type after it
                terminal.read_until_quiet()
            start = time.perf_counter()
            os.write(fd, b"?")
            end = terminal.read_until_quiet()
            if end is not None and end - start < 0.8:  # else it ran into the next redraw
                times.append(end - start)
        return times


async def redraw_time(steps: int) -> float:
    """Seconds for the dashboard to redraw every panel after one more step."""
    from tui.ui.app import RlwatchApp

    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "idle.log"
        log.write_bytes(b"")
        app = RlwatchApp([RunSession(LocalFile(log))])
        fill_model(steps, model=app.model)
        async with app.run_test(size=SIZE) as pilot:
            app._dirty = True
            await pilot.pause(0.5)
            # Steady state: the run is drawn and judged (it is judged 30 ms per redraw).
            while app._drawing or app._dirty or app.engine.behind or not app.findings:
                await pilot.pause(0.05)
            start = time.perf_counter()
            fill_model(1, seed=steps + 1, model=app.model)  # one more step: every panel redraws
            await app.dashboard.show_model()
            await pilot.pause()
            return time.perf_counter() - start


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]


def rows(steps: int = 100_000) -> list[Row]:
    empty = press_times(0)
    full = press_times(steps)
    redraw = asyncio.run(redraw_time(steps))
    panels = len(DASHBOARD_CONCEPTS)
    return [
        Row(f"keypress (`?`) → screen redrawn at the terminal, {panels} panels × {steps:,} points, p95",
            f"{p95(full) * 1000:.0f} ms (median {statistics.median(full) * 1000:.0f} ms)",
            f"same keys on an empty run {p95(empty) * 1000:.0f} ms", "≤ 50 ms", p95(full) <= 0.050),
        Row(f"new step → all {panels} panels redrawn, {steps:,} points each",
            f"{redraw * 1000:.0f} ms", "", "(informative)", True),
    ]


if __name__ == "__main__":
    from bench.table import print_table

    print_table(rows(), "see run_all.py")
