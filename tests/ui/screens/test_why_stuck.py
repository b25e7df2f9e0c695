"""The "why is it stuck" view on the real app, driven by keys, over real hung runs' logs
(tests/fixtures/logs/generated/hangs and ddp) copied to a temporary folder and followed as a
local file. A run reads as stalled by its file's modification time: the log last written two
hours ago, as a hung run's is; nothing sleeps."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from rich.text import Text
from textual.widgets import OptionList

from tests.session.test_process_states import hung_trainer, quick_stall_rules
from tests.support import DDP, HANGS, dashboard_on, hang_readings, header_text, history_of, text_of, wait_for
from tui.rules.stall_explanation import ProcessEntry
from tui.session import run_session
from tui.sources.local_file import LocalFile
from tui.ui.app import RlwatchApp
from tui.ui.screens.findings import FindingsScreen
from tui.ui.screens.help import HelpScreen
from tui.ui.screens.log_at import LogAtScreen
from tui.ui.screens.why_stuck import WhyStuckScreen

SAVE_BLOCKED = HANGS / "save_blocked_at_step8_still_hanging.log"
NCCL_HANG = DDP / "nccl_rank1_hang_still_hanging.log"
TWO_HOURS = 2 * 3600.0


def hung_copy(folder: Path, log: Path, age_s: float, extra: bytes = b"") -> Path:
    """``log`` copied to ``folder`` (``extra`` appended), last written ``age_s`` ago."""
    copy = folder / "train.log"
    shutil.copyfile(log, copy)
    with copy.open("ab") as out:
        out.write(extra)
    written = time.time() - age_s
    os.utime(copy, (written, written))
    return copy


def app_on(log: Path) -> RlwatchApp:
    return dashboard_on(LocalFile(log, poll_seconds=0.05), watch_accelerators=False)


def prompts(app: RlwatchApp) -> list[Text]:
    options = app.screen.query_one(OptionList)
    return [options.get_option_at_index(index).prompt for index in range(options.option_count)]


def shown(app: RlwatchApp) -> str:
    return "\n".join(prompt.plain for prompt in prompts(app))


def on_screen(app: RlwatchApp) -> str:
    """The screen's rows as the terminal shows them."""
    rows = app.screen._compositor.render_full_update().strips
    return "\n".join("".join(segment.text for strip in chops for segment in strip) for chops in rows)


def headline(app: RlwatchApp) -> str:
    return text_of(app.screen.query_one("#headline")).strip()


async def stalled(pilot, app: RlwatchApp) -> None:
    await wait_for(pilot, lambda: any(f.rule == "stalled" for f in app.findings), "the stalled finding",
                   timeout=15)


async def tail_read(pilot, app: RlwatchApp) -> None:
    """Wait for the view's items, the log's last lines among them."""
    screen = app.screen
    assert isinstance(screen, WhyStuckScreen)
    await wait_for(pilot, lambda: screen.tail_read, "the log's last lines")


async def test_the_stalled_finding_opens_the_save_line_its_schedule_and_the_last_save(tmp_path):
    app = app_on(hung_copy(tmp_path, SAVE_BLOCKED, TWO_HOURS))
    async with app.run_test(size=(80, 24)) as pilot:
        await stalled(pilot, app)
        await pilot.pause(0.2)
        assert "h Stuck?" in on_screen(app)  # offered on the dashboard of a stalled run
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FindingsScreen), "the findings")
        await pilot.press("enter")  # the cursor starts on the worst finding: the stall
        await wait_for(pilot, lambda: isinstance(app.screen, WhyStuckScreen), "the why view")
        await tail_read(pilot, app)
        assert headline(app).startswith("stalled: no new step for 2 h 00 min after step 7")
        items = shown(app)
        assert ("where: saving a checkpoint, by the last line since step 7 that names a phase\n"
                "  log line: train.log, byte 1,794: local_global_step_folder: "
                "/tmp/tmp.JSDJq71WJg/save_blocked_at_step8/global_step_8") in items
        assert "step 8 saves a checkpoint (trainer.save_freq=4)\n  config: trainer.save_freq=4" in items
        assert ("the last save took under 1 s (timing_s/save_checkpoint at step 4); this step has waited "
                "2 h 00 min\n  earlier steps' timing: timing_s/save_checkpoint at step 4") in items
        # At 80×24 every item is on screen, each source dimmed under its sentence.
        await pilot.pause(0.2)
        screen_text = on_screen(app)
        for words in ("stalled past", "byte 1,794", "(trainer.save_freq=4)", "the last save took under 1 s",
                      "global_step_8", "esc Back", "⏎ Open"):
            assert words in screen_text
        assert all(span.style == "dim" for prompt in prompts(app) for span in prompt.spans)
        # enter on the phase's item: the log at that byte, the line marked
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, LogAtScreen), "the log at the line")
        await wait_for(pilot, lambda: "global_step_8" in text_of(app.screen.query_one("#failure-exception")),
                       "the marked line")
        assert "byte 1,794" in text_of(app.screen.query_one("#title"))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, WhyStuckScreen), "back to the why view")


async def test_h_on_a_hang_no_line_explains_says_unknown_and_what_each_gpu_does(tmp_path):
    """Rank 1 asleep before step 5's all-reduce on 2×H200: the readings nvidia-smi gave then."""
    app = app_on(hung_copy(tmp_path, NCCL_HANG, TWO_HOURS))
    async with app.run_test(size=(200, 50)) as pilot:
        await stalled(pilot, app)
        history_of(hang_readings(), time.time() - 60, app.session.accelerators)
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, WhyStuckScreen), "the why view")
        await wait_for(pilot, lambda: "localhost:1" in shown(app), "the devices")
        items = shown(app)
        assert "where: unknown: no line since step 4 names a phase\n  log: train.log, nothing after byte 468" in items
        assert ("localhost:0 busy with flat power and memory (waiting in a collective?) (100 %, 168 W, "
                "1663 MiB; 2 readings)\n  accelerator reading: localhost GPU 0: 2 readings over 11 s") in items
        assert "localhost:1 idle (0 %, 123 W, 1663 MiB; 2 readings)" in items
        assert "the rank on an idle device is usually the one the others wait for" in items
        assert "saving a checkpoint" not in items
        await pilot.press("question_mark")  # the view's keys, and how to read it
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await wait_for(pilot, lambda: "enter on a log line opens the log" in on_screen(app).replace("\n", " ")
                       or "enter on a log line" in on_screen(app), "the view's guide")


async def test_log_text_since_the_step_is_shown_literally(tmp_path):
    hostile = b"(TaskRunner pid=5642) [bold red]boom[/] \x1b]0;pwned\x07 \xe2\x80\xaeevil [link=x]y\n"
    app = app_on(hung_copy(tmp_path, SAVE_BLOCKED, TWO_HOURS, hostile))
    async with app.run_test(size=(80, 24)) as pilot:
        await stalled(pilot, app)
        await pilot.press("w")  # what the header's verdict names: the stall
        await wait_for(pilot, lambda: isinstance(app.screen, WhyStuckScreen), "the why view")
        await tail_read(pilot, app)
        (line,) = [prompt for prompt in prompts(app) if "boom" in prompt.plain]
        assert line.plain.startswith("[bold red]boom[/] ␛]0;pwned␇ ")
        assert "\x1b" not in line.plain and "\u202e" not in line.plain and "[link=x]y" in line.plain
        assert [span.style for span in line.spans] == ["dim"]  # the source line only: no markup obeyed
        await pilot.pause(0.2)
        assert "[bold red]boom[/] ␛]0;pwned␇" in on_screen(app)


async def test_an_overdue_run_shows_its_silence_growing_then_moves_again(tmp_path):
    """Two minutes without a step where a step takes 0.3 s: overdue, not stalled (that takes
    10 min). The header says so and its count grows; the view says when the run steps again."""
    log = hung_copy(tmp_path, SAVE_BLOCKED, 120.0)
    app = app_on(log)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.model.last_step == 7 and app.findings is not None
                       and not app.engine.behind, "the run read")
        await wait_for(pilot, lambda: "no step for 2 min (a step takes 0.3 s" in header_text(app), "overdue")
        assert not any(f.rule == "stalled" for f in app.findings)
        header = app.dashboard.header
        header.clock = lambda: time.time() + 300
        header.refresh()
        await wait_for(pilot, lambda: "no step for 7 min (a step takes 0.3 s" in header_text(app), "longer")
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, WhyStuckScreen), "the why view")
        assert headline(app).startswith("overdue, not stalled yet: no new step for 2 min after step 7")
        assert "stalled only past 10 min" in shown(app)
        with log.open("ab") as out:
            out.write(b"(TaskRunner pid=5642) step:8 - train/loss:1.5 - timing_s/save_checkpoint:0.0004"
                      b" - timing_s/step:0.3002\n")
        await wait_for(pilot, lambda: headline(app).startswith("the run is moving: step 8 came"),
                       "the run moving again", timeout=15)
        assert not app.screen.query_one(OptionList).display


async def test_h_is_offered_only_while_the_run_is_stuck(tmp_path):
    app = app_on(hung_copy(tmp_path, SAVE_BLOCKED, 0.0))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.model.last_step == 7 and app.up_to_date, "the run read and judged")
        await pilot.pause(0.2)
        assert "Stuck?" not in on_screen(app)
        await pilot.press("h")
        await pilot.pause(0.2)
        assert app.screen is app.dashboard


async def test_the_palette_names_the_view(tmp_path):
    app = app_on(hung_copy(tmp_path, NCCL_HANG, TWO_HOURS))
    async with app.run_test(size=(100, 30)) as pilot:
        await stalled(pilot, app)
        await pilot.press("ctrl+p", *"Why is it stuck")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, WhyStuckScreen), "the why view")
        await wait_for(pilot, lambda: headline(app).startswith("stalled: no new step for 2 h 00 min after step 4"),
                       "its headline")


async def test_a_stopped_trainer_is_read_while_the_view_is_open_and_shown_with_its_proc_entry(tmp_path, monkeypatch):
    """A real trainer stopped with SIGSTOP after step 3: the dashboard reads its /proc while
    the run is stuck, and the view lists it with what a stopped process means."""
    monkeypatch.setattr(run_session, "PROCESS_READ_S", 0.2)
    with hung_trainer(tmp_path / "run.log", stopped=True) as trainer:
        # The processes are read with the accelerators (this machine has none: said in a notice).
        app = dashboard_on(LocalFile(tmp_path / "run.log", poll_seconds=0.05), rules=quick_stall_rules())
        async with app.run_test(size=(80, 24)) as pilot:
            await stalled(pilot, app)
            await pilot.press("h")
            await wait_for(pilot, lambda: isinstance(app.screen, WhyStuckScreen), "the why view")
            await wait_for(pilot, lambda: "% CPU over" in shown(app), "the trainer read twice", timeout=15)
            items = shown(app)
            assert f"pid {trainer.pid} (python) stopped (T: SIGSTOP or ^Z), 0 % CPU over " in items
            assert f"  process: /proc/{trainer.pid}/stat on " in items
            assert ("a stopped process runs nothing until continued (kill -CONT), and the run waits on it"
                    in items)
            screen = app.screen
            assert isinstance(screen, WhyStuckScreen)
            assert any(isinstance(item.source, ProcessEntry) and item.source.pids == (trainer.pid,)
                       for item in screen.items)
