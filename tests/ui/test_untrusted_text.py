"""The dashboard shows a log's escape sequences inert and visible (DESIGN.md, "Log text is
untrusted"): a key, a printed sample, plain step text, a crash line and the run directory's
name carry OSC 0/2/52/8, a CSI clear, an 8-bit CSI and markup; every screen they reach draws
them as safe_text's visible form, and the terminal title says only what rlwatch set."""

from __future__ import annotations

from pathlib import Path

from textual.geometry import Region

from tests.hostile import (
    CLEAR_SHOWN,
    CLIPBOARD_SHOWN,
    EVIL_KEY,
    EVIL_KEY_SHOWN,
    TITLE0,
    TITLE0_SHOWN,
    TITLE2_SHOWN,
    controls_in,
    hostile_log,
)
from tests.support import (
    RecordingApp,
    RecordingDriver,
    dashboard_on,
    go_to_step,
    open_app,
    open_detail,
    open_steps,
    shown_step,
    text_of,
    wait_for,
)
from tui.ui.app import RlwatchApp
from tui.ui.screens.findings import FindingsScreen
from tui.ui.terminal import clean_title, rlwatch_driver
from tui.ui.widgets.sample_card import SampleCard
from tui.ui.widgets.step_log import StepLog
from tui.ui.widgets.step_metrics import StepMetrics


def drawn(app: RlwatchApp) -> str:
    """Everything the current screen's widgets draw, as plain text, one line per row."""
    lines = []
    for widget in app.screen.query("*"):
        if widget.display and widget.outer_size.area:
            lines += [strip.text for strip in widget.render_lines(Region(0, 0, *widget.outer_size))]
    return "\n".join(lines)


def assert_screen_inert(app: RlwatchApp) -> None:
    """No control character in anything drawn, nor in the whole screen as exported, and no
    hyperlink style (an OSC 8 or ``[link=…]`` obeyed)."""
    assert controls_in(drawn(app)) == []
    assert controls_in(app.export_screenshot()) == []
    for widget in app.screen.query("*"):
        if widget.display and widget.outer_size.area:
            for strip in widget.render_lines(Region(0, 0, *widget.outer_size)):
                assert all(segment.style is None or not segment.style.link for segment in strip)


def evil_run(tmp_path: Path) -> Path:
    folder = tmp_path / f"run{TITLE0}"
    folder.mkdir()
    return hostile_log(folder)


async def test_every_screen_shows_the_sequences_inert_and_the_title_is_rlwatchs(tmp_path):
    app = open_app(evil_run(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "5/5", "step 5")
        await wait_for(pilot, lambda: "CRIT" in app.title, "the critical finding in the title")
        # The nan finding is critical at once; the crash's line once its block has been read.
        await wait_for(pilot, lambda: "crashed: RuntimeError" in drawn(app), "the crash named")
        assert_screen_inert(app)
        # The run's name (its directory) in the header and the title, visibly.
        assert "run␛]0;PWNED-TITLE␇" in drawn(app)
        assert f"crashed: RuntimeError: boom{TITLE0_SHOWN}{CLIPBOARD_SHOWN}" in drawn(app)
        title = clean_title(app.title)
        assert title.startswith("rlwatch run␛]0;PWNED-TITLE␇/grpo 5/5 ") and controls_in(title) == []

        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FindingsScreen), "the findings")
        await pilot.pause(0.2)
        assert_screen_inert(app)
        findings = drawn(app)
        assert "evil␛]0;PWNED-TITLE␇" in findings  # the loss-nan finding's metric
        await pilot.press("escape")

        await open_steps(pilot, app)
        assert_screen_inert(app)
        await go_to_step(pilot, app, 5)
        await open_detail(pilot, app, 5)
        metrics = app.screen.query_one(StepMetrics)
        await wait_for(pilot, lambda: metrics.row_count > 0, "the step's metrics")
        assert any(row.key and EVIL_KEY_SHOWN in row.cells[0] for row in metrics.rows)
        assert not any("\x1b" in cell for row in metrics.rows for cell in row.cells)
        assert_screen_inert(app)
        assert "evil␛]0;PWNED-TITLE␇␛]2;PWNED-TWO␛\\" in drawn(app)


async def test_the_log_tab_shows_osc_clipboard_links_and_clear_screen_visibly(tmp_path):
    app = open_app(evil_run(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "5/5", "step 5")
        await open_steps(pilot, app)
        await go_to_step(pilot, app, 4)
        await open_detail(pilot, app, 4)
        await pilot.press("l")
        step_log = app.screen.query_one(StepLog)
        await wait_for(pilot, lambda: step_log.query(SampleCard), "the printed sample's card")
        await pilot.pause(0.2)
        assert_screen_inert(app)
        text = "\n".join(text_of(widget) for widget in step_log.query("Static"))
        assert f"plain line with a title {TITLE0_SHOWN} and {TITLE2_SHOWN}" in text
        assert f"clipboard {CLIPBOARD_SHOWN} link ␛]8;;https://evil.example/␛\\here␛]8;;␛\\" in text
        assert f"clear {CLEAR_SHOWN} c1 \\x9b2J [bold]markup[/bold][link=https://evil.example/]x[/link]" in text
        card = text_of(step_log.query_one(SampleCard))
        assert f"what is 2+2? {TITLE0_SHOWN} {CLIPBOARD_SHOWN}" in card
        assert f"four {TITLE2_SHOWN}" in card


def test_the_title_sequence_rlwatch_writes_carries_nothing_else():
    driver = rlwatch_driver(RecordingDriver, ascii_only=False)()
    driver.set_title(f"rlwatch run{TITLE0}/grpo 5/5 \x9b2J\x1b]52;c;eA==\x07")
    written = driver.written[-1]
    assert written.startswith("\x1b]2;") and written.endswith("\x07")
    assert controls_in(written[4:-1]) == []
    assert written[4:-1] == "rlwatch run␛]0;PWNED-TITLE␇/grpo 5/5 \\x9b2J␛]52;c;eA==␇"


async def test_dumps_and_the_chart_of_an_evil_key_show_it_inert(tmp_path):
    import json

    from tests.hostile import ALL
    from tests.support import highlight_metric, open_dumps
    from tui.sources.local_file import LocalFile
    from tui.ui.screens.chart import ChartScreen

    log = evil_run(tmp_path)
    run_dir = log.parent
    rollouts = run_dir / "rollout_dumps"
    rollouts.mkdir()
    rows = [{"input": f"question {i} {ALL}", "output": f"answer {i}\n{ALL}", "gts": f"4{ALL}",
             "score": float(i), "step": 4, f"extra{ALL}": f"x{ALL}"} for i in range(2)]
    (rollouts / "4.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    app = dashboard_on(LocalFile(log, poll_seconds=0.05), run_dir=run_dir)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "5/5", "step 5")
        dumps = await open_dumps(pilot, app, 4, 1)
        await pilot.pause(0.2)
        assert_screen_inert(app)
        card = text_of(dumps.query_one(SampleCard))
        assert "question 1" in card and f"{TITLE0_SHOWN}{TITLE2_SHOWN}" in card
        assert "extra␛]0;PWNED-TITLE␇" in card  # an extra field's name, from the dump

        await pilot.press("m")
        metrics = app.screen.query_one(StepMetrics)
        await wait_for(pilot, lambda: metrics.row_count > 0, "the step's metrics")
        await highlight_metric(pilot, app, EVIL_KEY.replace("\x1b[2J\x1b[H", ""))
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ChartScreen), "the evil key's chart")
        await pilot.pause(0.3)
        assert_screen_inert(app)
        assert "evil␛]0;PWNED-TITLE␇␛]2;PWNED-TWO" in drawn(app)  # the title names the key


async def test_smi_names_and_tool_errors_show_inert_in_the_strip_and_processes(tmp_path, monkeypatch):
    import time

    from tests.hostile import ALL
    from tests.support import app_on, open_processes, rows_of
    from tui.model.accelerators import AcceleratorHistory
    from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample

    history = AcceleratorHistory()
    history.add([AcceleratorSample(f"box{TITLE0}", 0, "GPU-1", f"H100{TITLE0}", 50.0, 1.0, 2.0,
                                   40.0, 100.0,
                                   processes=(AcceleratorProcess(7, f"python{ALL}", None, "GPU-1"),))],
                time.time())
    history.set_status(f"other{TITLE0}", f"nvidia-smi: {ALL}", False, time.time())
    app = dashboard_on(app_on(tmp_path, monkeypatch).source, watch_accelerators=False)
    app.session.accelerators = history
    app.dashboard.accelerators.history = history
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "3", "step 3")
        app.dashboard.accelerators.show()
        await pilot.pause(0.2)
        assert_screen_inert(app)
        assert f"box{TITLE0_SHOWN}:0 H100␛]0;PWNED" in drawn(app)
        assert f"other{TITLE0_SHOWN}: nvidia-smi:" in drawn(app)  # a failing host, its error next
        rows = await open_processes(pilot, app, 1)
        assert rows[0][:3] == [f"box{TITLE0_SHOWN}", f"0 H100{TITLE0_SHOWN}", "7"]
        assert rows[0][3].startswith(f"python{TITLE0_SHOWN}{TITLE2_SHOWN}") and rows == rows_of(app)
        assert_screen_inert(app)


async def test_the_on_critical_hook_gets_the_findings_inert(tmp_path):
    import json

    from tui.sources.local_file import LocalFile

    hooks = tmp_path / "hooks"
    hooks.mkdir()
    app = dashboard_on(LocalFile(evil_run(tmp_path), poll_seconds=0.05), app=RecordingApp,
                       on_critical=f"cat > {hooks}/$$.tmp && mv {hooks}/$$.tmp {hooks}/$$.json")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(list(hooks.glob("*.json"))) == 2,
                       "both critical findings sent to the hook")
    raws = [path.read_text(encoding="utf-8") for path in hooks.glob("*.json")]
    assert all(controls_in(raw) == [] for raw in raws)
    got = {finding["rule"]: finding for finding in map(json.loads, raws)}
    assert controls_in(json.dumps(got, ensure_ascii=False)) == []  # what ``jq -r`` would print
    assert got["loss-nan"]["metric"] == EVIL_KEY_SHOWN
    assert TITLE0_SHOWN in got["crash"]["message"] and "run␛]0;PWNED-TITLE␇" in got["crash"]["run"]


async def test_a_newline_and_a_bidi_override_in_the_runs_name_are_shown_not_obeyed(tmp_path):
    folder = tmp_path / "run\nrlwatch: ok\u202e"
    folder.mkdir()
    app = open_app(hostile_log(folder))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: shown_step(app) == "5/5", "step 5")
        assert_screen_inert(app)
        assert "run␊rlwatch: ok\\u202e" in drawn(app)  # the header, on one line
        # The title follows the header's redraw (it failed once on a loaded machine, read first).
        await wait_for(pilot, lambda: " 5/5 " in app.title, "the title with step 5")
        title = clean_title(app.title)
        assert title.startswith("rlwatch run␊rlwatch: ok\\u202e/grpo 5/5 ") and controls_in(title) == []
