"""The dashboard driven through Textual's pilot on real log files (no mocked sources).

Each test writes a log under tmp_path from lines of a real corpus run, opens
the real app on it through LocalFile + Feed, changes the file the way a
training run (or a user) would, and reads back what the widgets show.
"""

from __future__ import annotations

import asyncio
import os

from textual.geometry import Region
from textual.widgets import Sparkline

from tests.support import (
    RUN,
    dashboard_on,
    header_text,
    metric,
    open_app,
    panel,
    shown_step,
    stats_text,
    step_lines,
    text_of,
    wait_for,
)
from tui.model.aliases import DASHBOARD_CONCEPTS
from tui.sources.base import Data, SourceError, Status
from tui.ui.screens.dashboard import DashboardScreen
from tui.ui.screens.help import HelpScreen
from tui.ui.widgets.line_chart import LineChart


async def test_dashboard_fills_and_follows_appended_steps(tmp_path):
    lines = step_lines(4)
    log = tmp_path / "grpo.log"
    log.write_bytes(b"Training from scratch\n" + b"".join(lines[:3]))
    app = open_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "3", "step 3 in the header")

        reward = metric(lines[2], "critic/score/mean")
        change = reward - metric(lines[1], "critic/score/mean")
        assert stats_text(app, "reward").split()[:3] == [f"{reward:.4g}", "Δ", f"{change:+.4g}"]
        assert "critic/score/mean" in text_of(panel(app, "reward"))
        await wait_for(pilot, lambda: len(panel(app, "reward").query_one(Sparkline).data or []) == 3,
                       "three points in the reward sparkline")
        # The first steps carry no validation metrics: that panel says so quietly.
        assert stats_text(app, "val").strip() == "no data"
        assert panel(app, "val").has_class("-empty")

        with log.open("ab") as out:
            out.write(b"[prompt] a sample dump between steps\n[score] 1.0\n" + lines[3])
        await wait_for(pilot, lambda: shown_step(app) == "4", "step 4 after appending")
        entropy = metric(lines[3], "actor/entropy_loss")
        assert stats_text(app, "entropy").split()[0] == f"{entropy:.4g}"
        await wait_for(pilot, lambda: len(panel(app, "entropy").query_one(Sparkline).data or []) == 4,
                       "four points in the entropy sparkline")
        assert "last step" in header_text(app)


async def test_replaced_or_truncated_log_is_read_again(tmp_path):
    lines = step_lines(6)
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(lines))
    app = open_app(log)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "6", "step 6")

        # A new run started with the same log name: a different file at the path.
        replacement = tmp_path / "grpo.log.new"
        replacement.write_bytes(b"".join(lines[:2]))
        os.replace(replacement, log)
        await wait_for(pilot, lambda: shown_step(app) == "2", "the replaced log re-read")
        assert "was replaced" in header_text(app)
        assert app.model.step_count == 2
        await wait_for(pilot, lambda: len(panel(app, "reward").query_one(Sparkline).data or []) == 2,
                       "the sparkline redrawn from the new file")

        # The same file cut short in place (a `>` redirect restarting the run).
        log.write_bytes(lines[0])
        await wait_for(pilot, lambda: shown_step(app) == "1", "the truncated log re-read")
        assert "was truncated" in header_text(app)
        assert stats_text(app, "reward").split()[0] == f"{metric(lines[0], 'critic/score/mean'):.4g}"


async def test_markup_in_log_text_shows_literally(tmp_path):
    folder = tmp_path / "run[bold]x[link=x]y"
    folder.mkdir()
    log = folder / "log[red].log"
    key = "val/test_score/a[link=x]b/[bold]c"
    # The second line closes the first (the scanner waits to see whether a
    # mid-length step line was hard-wrapped by a terminal).
    log.write_text(f"step:1 - a[link=x]b/[bold]c:1.0 - {key}:0.5 - critic/score/mean:0.25\n"
                   "step:2 - critic/score/mean:0.5\n")
    app = open_app(log)
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "2", "step 2")
        assert "a[link=x]b/[bold]c" in app.model.series

        header_strips = app.dashboard.header.render_lines(Region(0, 0, *app.dashboard.header.outer_size))
        assert str(log) in header_strips[0].text
        val_panel = panel(app, "val")
        assert val_panel.key == key
        panel_strips = val_panel.render_lines(Region(0, 0, *val_panel.outer_size))
        assert key in panel_strips[-1].text  # the key, literally, in the bottom border
        for strip in [*header_strips, *panel_strips]:
            assert all(segment.style is None or not segment.style.link for segment in strip)
        assert stats_text(app, "val").split()[0] == "0.5"


async def test_help_opens_and_closes_and_q_quits(tmp_path):
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(2)))
    app = open_app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        help_text = "\n".join(text_of(widget) for widget in app.screen.query("Static"))
        assert "quit rlwatch" in help_text and "close this help" in help_text and "Δ" in help_text

        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the dashboard again")

        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, "the app to exit")
    assert app.return_code == 0


async def test_all_panels_fit_at_80x24():
    app = open_app(RUN)  # read-only: the corpus file is followed, never written
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "1120", "the whole run read")
        screen = app.screen.region
        panels = app.dashboard.grid.shown_panels()  # the extra panels need a bigger screen
        assert [p.concept for p in panels] == list(DASHBOARD_CONCEPTS)
        for concept, item in zip(DASHBOARD_CONCEPTS, panels):
            assert screen.contains_region(item.region), f"{concept.title} is cut off"
            assert concept.title in text_of(item).splitlines()[0]
            assert item.query_one(Sparkline).size.height >= 1
            assert stats_text(app, concept.id).strip() != "no data"
        assert {item.region.width for item in panels} == {40}  # 2 columns

        await pilot.resize_terminal(200, 50)
        await wait_for(pilot, lambda: len({item.region.x for item in panels}) == 4, "4 columns")
        chart = panels[0].query_one(LineChart)
        last = f"─{panels[0].series.steps[-1]}"  # 1119: the run's step 1120 only validated
        await wait_for(pilot, lambda: panels[0].charted and text_of(chart).rstrip().endswith(last),
                       "a line chart of the whole run, to its last step")
        # The room goes to more panels (clip fraction, throughput…) and to line charts with
        # their axes, not to taller blocks.
        assert chart.size.height > 5 and len(app.dashboard.grid.shown_panels()) == 12
        assert not panels[0].query_one(Sparkline).display


class ScriptedSource:
    """A source that says what the SSH source will say (Status events) around real log bytes.

    The SSH source is not written yet; this holds the app to the LogSource
    contract it will use, with real corpus bytes in between.
    """

    label = "gpu-box:/runs/grpo/train.log"

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.go_on = asyncio.Event()

    async def connect(self) -> str | None:
        return None

    async def stream(self, start: int, follow: bool):
        yield Status("connected to gpu-box")
        yield Data(0, self.data)
        yield Status("connection lost; reconnecting…", ok=False)
        await self.go_on.wait()
        yield Status("reconnected to gpu-box")
        raise SourceError("gpu-box: permission denied reading /runs/grpo/train.log")

    async def read_range(self, start: int, end: int) -> bytes:
        return self.data[start:end]

    async def close(self) -> None:
        pass


async def test_source_status_events_show_in_the_header():
    source = ScriptedSource(b"".join(step_lines(5)))
    app = dashboard_on(source, watch_accelerators=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: "reconnecting" in header_text(app), "the reconnecting status")
        await wait_for(pilot, lambda: shown_step(app) == "5", "the steps read before the drop")
        assert "gpu-box:/runs/grpo/train.log" in header_text(app).splitlines()[0]
        assert "✗ connection lost; reconnecting…" in header_text(app)

        source.go_on.set()
        await wait_for(pilot, lambda: "permission denied" in header_text(app), "the source's error")
        assert "reconnecting" not in header_text(app)
        assert shown_step(app) == "5"  # what was read stays on screen


async def test_a_run_with_only_logger_files_fills_the_dashboard_and_follows_them(tmp_path):
    """verl with trainer.logger=['tensorboard', 'file'] and no kept console: the event files
    and the JSONL are the run; a line the JSONL gains reaches the screen."""
    import json
    import shutil

    from tests.support import JSONL, RESUMED
    from tui.sources.logger_run import local_logger_run

    shutil.copytree(RESUMED, tmp_path / "tensorboard_log" / "proj" / "exp")
    (tmp_path / "proj").mkdir()
    jsonl = tmp_path / "proj" / "exp.jsonl"
    shutil.copy(JSONL, jsonl)
    source, note = local_logger_run(tmp_path)
    app = dashboard_on(source, note=note, run_dir=tmp_path, watch_accelerators=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "6", "step 6, which only TensorBoard has")
        await wait_for(pilot, lambda: panel(app, "reward").query_one(Sparkline).data,
                       "the reward sparkline")
        with jsonl.open("a") as out:
            out.write(json.dumps({"step": 7, "data": {"critic/score/mean": 0.875}}) + "\n")
        await wait_for(pilot, lambda: shown_step(app) == "7", "step 7 from the followed JSONL")
        # The panels redraw at most twice a second while a run is followed: after the header.
        await wait_for(pilot, lambda: stats_text(app, "reward").split()[0] == "0.875", "its reward in the panel")
        assert app.model.series["critic/score/mean"].value_at(7) == 0.875


async def test_the_header_shows_the_newest_bar_before_its_newline(tmp_path):
    """The header's s/it and ETA come from the bar on screen now, which tqdm has not ended
    with a newline yet (they lagged one bar; ``check`` read it)."""
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(2))
                    + b"Training Progress:  10%|#         | 2/20 [02:10<19:30, 65.00s/it]"
                    + b"\rTraining Progress:  15%|#5        | 3/20 [03:10<17:00, 60.00s/it]")
    app = open_app(log)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: "60 s/it" in header_text(app), "the newest bar's s/it")
        assert "17m00s" in header_text(app) or "17m" in header_text(app)
