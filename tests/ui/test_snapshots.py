"""Snapshots of every screen at 80×24 and 200×50, in ASCII and NO_COLOR, so a layout change is
seen in review.

The real app on a real log (the first 40 steps of corpus run 032, then the
CUDA OOM traceback of corpus log 018: a run that crashed after step 40),
driven by keys through Textual's pilot. Each screen is written as an SVG the
way the terminal would show it:

* NO_COLOR: the app is started with ``NO_COLOR`` set, and the screen's lines
  go through the app's own line filters (Textual applies them when writing to
  the terminal, not in its screenshots), so the SVG is the monochrome screen;
* ASCII: the same screen in colour with every character put through
  ``to_ascii``, as ``--ascii`` does to every byte written to the terminal.

What moves on its own is pinned: the header's clock (the time since the last
step is read from a frozen clock against the log's fixed modification time),
the run's label and name, and no accelerator is polled.

A snapshot that differs fails the test and leaves ``NAME.new.svg`` beside
``NAME.svg`` to open and compare; ``RLWATCH_UPDATE_SNAPSHOTS=1`` rewrites them.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import time
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import patch

import pytest
from rich.console import Console
from rich.text import Text
from textual.app import App

from tests.corpus import verl_log
from tests.support import HANGS, dashboard_on, match_snapshot, step_lines
from tests.ui.test_dashboard import wait_for
from tests.ui.test_drilldown import first_steps
from tui.cli.fleet import RunOptions, fleet_runs, listed_runs
from tui.rules.rule_file import load_rules
from tui.sources.local_file import LocalFile
from tui.sources.ssh.pool import ConnectionPool
from tui.ui.app import RlwatchApp
from tui.ui.fleet_app import FleetApp
from tui.ui.glyphs import to_ascii
from tui.ui.screens.chart import ChartScreen
from tui.ui.screens.findings import FindingsScreen
from tui.ui.screens.processes import ProcessesScreen
from tui.ui.screens.step_detail import StepDetailScreen
from tui.ui.screens.steps import StepsScreen
from tui.ui.screens.why_stuck import WhyStuckScreen
from tui.ui.widgets.chart_plot import ChartPlot

# The log's modification time, and "now" two minutes later.
WRITTEN_AT = 1_790_000_000.0
NOW = WRITTEN_AT + 120.0
SIZES = {"80x24": (80, 24), "200x50": (200, 50)}

# screen name → (keys from the dashboard, the screen class to wait for)
SCREENS = {
    "dashboard": ((), None),
    "steps": (("s",), StepsScreen),
    "step_detail": (("s", "j", "enter"), StepDetailScreen),
    "chart": (("c",), ChartScreen),
    "findings": (("f",), FindingsScreen),
    "processes": (("p",), ProcessesScreen),
}


def crashed_run(folder: Path) -> Path:
    log = first_steps(folder, 40)
    with log.open("ab") as out:
        out.write(verl_log("018").read_bytes())
    os.utime(log, (WRITTEN_AT, WRITTEN_AT))
    return log


def screen_svg(app: App[object], ascii_only: bool) -> str:
    """The screen as the terminal shows it: the app's line filters applied (NO_COLOR's
    monochrome), then, for ASCII, every character as ``--ascii`` writes it."""
    width, height = app.size
    update = app.screen._compositor.render_full_update()
    background = app.screen.styles.background
    console = Console(width=width, height=height, record=True, file=io.StringIO(),
                      color_system="truecolor", force_terminal=True, legacy_windows=False)
    for chops in update.strips:  # each line: the strips of its chops, left to right
        line = Text()
        for strip in chops:
            for line_filter in app._filters:
                strip = strip.apply_filter(line_filter, background)
            for segment in strip:
                line.append(segment.text, segment.style)
        console.print(line, no_wrap=True, crop=True, overflow="crop")
    svg = console.export_svg(title="rlwatch", unique_id="rlwatch")
    return to_ascii(svg) if ascii_only else svg


def crashed_dashboard(folder: Path) -> RlwatchApp:
    """The dashboard on ``crashed_run``, its header's clock pinned before the first frame (set
    after it, the header showed the real clock's age until its first tick, which a quick run
    could beat to the snapshot)."""
    app = dashboard_on(LocalFile(crashed_run(folder), poll_seconds=0.05), label="cola/grpo.log",
                       name="cola", watch_accelerators=False)
    app.dashboard.header.clock = lambda: NOW
    return app


async def judged(pilot, app: RlwatchApp) -> None:
    """Wait until the whole run is read and judged, the crash found."""
    await wait_for(pilot, lambda: app.model.last_step == 40 and any(
        f.rule == "crash" for f in app.findings) and not app.engine.behind, "the run judged",
        timeout=20)


@pytest.mark.parametrize("variant", ["ascii", "no_color"])
@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", list(SCREENS))
async def test_snapshot(tmp_path, monkeypatch, screen, size, variant):
    if variant == "no_color":
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    app = crashed_dashboard(tmp_path)
    keys, screen_class = SCREENS[screen]
    async with app.run_test(size=SIZES[size]) as pilot:
        await judged(pilot, app)
        await pilot.pause(0.3)
        for key in keys:
            await pilot.press(key)
            await pilot.pause(0.3)
        if screen_class is not None:
            await wait_for(pilot, lambda: isinstance(app.screen, screen_class), screen)
        if screen_class is ChartScreen:  # the figure follows the screen's first frame
            plot = app.screen.query_one(ChartPlot)
            await wait_for(pilot, lambda: plot.cursor_cell() is not None, "the figure")
        svg = await steady_svg(pilot, app, variant == "ascii")
    match_snapshot(f"{screen}_{size}_{variant}", svg)


async def steady_svg(pilot, app: RlwatchApp, ascii_only: bool, timeout: float = 15.0) -> str:
    """The screen once two frames half a second apart are the same: on a loaded machine a
    screen's table or figure comes frames after the screen itself, and a fixed pause took a
    picture of it half drawn."""
    svg = screen_svg(app, ascii_only)
    start = time.monotonic()
    while True:
        await pilot.pause(0.5)
        again = screen_svg(app, ascii_only)
        if again == svg or time.monotonic() - start > timeout:
            return again
        svg = again


# A real sweep's three runs (learning rate × KL coefficient) under one folder: one crashed out
# of memory, one whose clip fraction stays low (a warning), one running.
SWEEP = ("grpo_qwen2.5-7b_gsm8k_lr1e-6_kl0.001", "grpo_qwen2.5-7b_gsm8k_lr1e-6_kl0.01",
         "grpo_qwen2.5-7b_gsm8k_lr3e-6_kl0.001")
FLEET_SIZES = {"80x24": (80, 24), "120x24": (120, 24), "200x24": (200, 24)}


def sweep_folder(folder: Path) -> Path:
    sweep = folder / "sw"
    crashed, warning, running = (sweep / name for name in SWEEP)
    for run in (crashed, warning, running):
        run.mkdir(parents=True)
    (crashed / "train.log").write_bytes(b"".join(step_lines(4)) + verl_log("018").read_bytes())
    (warning / "train.log").write_bytes(b"".join(step_lines(10)))
    (running / "train.log").write_bytes(b"".join(step_lines(2)))
    for run in (crashed, warning, running):
        os.utime(run / "train.log", (WRITTEN_AT, WRITTEN_AT))
    return sweep


async def sweep_fleet_svg(folder: Path, size: tuple[int, int]) -> str:
    """The fleet on the sweep (``rlwatch 'sw/*'``), once every row is drawn, as an SVG; its
    clock pinned two minutes after the logs were written, as the dashboard's is."""
    pool = ConnectionPool()
    app = FleetApp(fleet_runs(listed_runs([str(sweep_folder(folder) / "*")]), pool,
                              RunOptions(None, load_rules())))
    clock = SimpleNamespace(time=lambda: NOW, monotonic=time.monotonic)
    try:
        with patch("tui.ui.fleet_app.time", clock):
            async with app.run_test(size=size) as pilot:
                await wait_for(pilot, lambda: app.up_to_date and not app.loading and len(app.runs) == 3
                               and app.fleet.rows and app.fleet.rows[0][1].worst.startswith("crash:"),
                               "every row", timeout=20)
                await pilot.pause(0.5)
                return screen_svg(app, False)
    finally:
        await asyncio.gather(*(run.close() for run in app.runs))
        await pool.close()


@pytest.mark.parametrize("size", list(FLEET_SIZES))
async def test_fleet_snapshot_of_a_sweep(tmp_path, monkeypatch, size):
    """Each run's name keeps what tells it from the others, and the worst finding what failed."""
    monkeypatch.setenv("NO_COLOR", "1")
    match_snapshot(f"fleet_sweep_{size}", await sweep_fleet_svg(tmp_path, FLEET_SIZES[size]))


SMALL_PANES = {"80x12": (80, 12), "60x20": (60, 20), "100x15": (100, 15)}


@pytest.mark.parametrize("size", list(SMALL_PANES))
async def test_small_pane_snapshot(tmp_path, monkeypatch, size):
    """A tmux split (half height, half width): every key metric keeps its value, its change
    and a sparkline on one line, and the header its verdict."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = crashed_dashboard(tmp_path)
    async with app.run_test(size=SMALL_PANES[size]) as pilot:
        await judged(pilot, app)
        await pilot.pause(0.5)
        svg = screen_svg(app, False)
    match_snapshot(f"dashboard_small_{size}", svg)


@pytest.mark.parametrize("variant", ["ascii", "no_color"])
@pytest.mark.parametrize("size", list(SIZES))
async def test_why_stuck_snapshot(tmp_path, monkeypatch, size, variant):
    """The why view on a real run hung saving its step-8 checkpoint (hangs/), an hour after its
    log was last written: every item and its source whole at 80×24 as at 200×50."""
    if variant == "no_color":
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    svg = await why_stuck_svg(tmp_path, SIZES[size], variant == "ascii")
    match_snapshot(f"why_stuck_{size}_{variant}", svg)


async def why_stuck_svg(folder: Path, size: tuple[int, int], ascii_only: bool) -> str:
    """The why view (``h``) on the run hung saving its step-8 checkpoint, an hour after its log
    was last written, the clock pinned: its screen as SVG (docs/make_screenshots.py too)."""
    log = folder / "train.log"
    shutil.copyfile(HANGS / "save_blocked_at_step8_still_hanging.log", log)
    os.utime(log, (WRITTEN_AT, WRITTEN_AT))
    app = dashboard_on(LocalFile(log, poll_seconds=0.05), label="cola/train.log", name="cola",
                       watch_accelerators=False)
    app.dashboard.header.clock = lambda: WRITTEN_AT + 3600
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: any(f.rule == "stalled" for f in app.findings), "the stall", timeout=20)
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, WhyStuckScreen), "the why view")
        screen = app.screen
        assert isinstance(screen, WhyStuckScreen)
        screen.clock = lambda: WRITTEN_AT + 3600
        screen.refresh_items()
        # Five: the log's last line is the save's own, quoted by the "where" item already.
        await wait_for(pilot, lambda: screen.tail_read and len(screen.items) == 5, "every item")
        await pilot.pause(0.5)
        return screen_svg(app, ascii_only)
