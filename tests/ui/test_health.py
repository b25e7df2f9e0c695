"""The health rules in the dashboard: panel states, the header verdict, the findings and report
screens, the bell and the --on-critical hook — the real app on real log files."""

from __future__ import annotations

import json

from textual.widgets import DataTable

from tests.support import (
    RecordingApp,
    dashboard_on,
    header_text,
    healthy_then_nan,
    panel,
    step_lines,
    text_of,
    wait_for,
)
from tui.rules.findings import Finding, Severity
from tui.sources.local_file import LocalFile
from tui.ui.health import run_state
from tui.ui.screens.findings import FindingsScreen
from tui.ui.screens.report import ReportScreen


async def test_panels_show_state_and_the_broken_rule_and_a_critical_rings_once(tmp_path):
    log, nan_line = healthy_then_nan(tmp_path)
    hook_out = tmp_path / "hook.json"
    app = dashboard_on(LocalFile(log, poll_seconds=0.05), app=RecordingApp, on_critical=f"cat >> {hook_out}")
    async with app.run_test(size=(120, 40)) as pilot:
        # Entropy left its band at step 21: a warning; the KL, above its band from step 11
        # on for 20 steps, is a note of the run by step 30 and colours nothing.
        await wait_for(pilot, lambda: panel(app, "entropy").state == "warning", "the entropy warning")
        assert "▲ WARN entropy-low: below 0.1" in text_of(panel(app, "entropy"))
        assert panel(app, "entropy").has_class("-warning") and not panel(app, "kl").has_class("-warning")
        assert app.bells == 0 and "warning" in header_text(app)
        with open(log, "ab") as handle:
            handle.write(nan_line)
        await wait_for(pilot, lambda: panel(app, "pg_loss").state == "critical", "the nan critical")
        assert "✖ CRIT loss-nan" in text_of(panel(app, "pg_loss"))
        assert "critical: loss-nan" in header_text(app)
        await wait_for(pilot, lambda: hook_out.exists() and hook_out.read_text().strip(), "the hook")
        assert app.bells == 1
        sent = json.loads(hook_out.read_text().splitlines()[0])
        assert sent["rule"] == "loss-nan" and sent["metric"] == "actor/pg_loss" and sent["value"] == "nan"
        app._judge()  # judged again: the same finding does not ring again
        assert app.bells == 1


async def test_findings_and_report_screens_by_keys(tmp_path):
    log, nan_line = healthy_then_nan(tmp_path)
    log.write_bytes(log.read_bytes() + nan_line)
    app = dashboard_on(LocalFile(log, poll_seconds=0.05), app=RecordingApp)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.findings, "findings")
        await pilot.press("f")
        assert isinstance(app.screen, FindingsScreen)
        table = app.screen.query_one(DataTable)
        rules = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert "loss-nan" in rules and "kl-high" in rules
        assert str(table.get_row_at(0)[0]).startswith("✖")  # newest first: the nan at step 31
        await pilot.press("escape")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReportScreen), "the report")
        assert "Stability" in app.screen.text and "policy loss mean" in app.screen.text
        await pilot.press("escape")
        assert app.screen is app.dashboard


async def test_the_file_loggers_exact_values_reach_the_panels(tmp_path):
    """A run that also logged to verl's file logger: the dashboard merges its JSONL."""
    from tests.corpus import REPO
    from tests.support import open_app
    from tui.model.merge import Source

    jsonl = tmp_path / "proj" / "exp.jsonl"
    jsonl.parent.mkdir()
    jsonl.write_bytes((REPO / "tests/fixtures/jsonl/v0.7.1_orjson.jsonl").read_bytes())
    log = tmp_path / "train.log"
    log.write_bytes(f"Creating file logger at {jsonl}\n".encode()
                    + b"step:4 - actor/entropy:0.5 - critic/score/mean:0.1\n")
    app = open_app(log)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.model.series.get("actor/entropy") is not None
                       and app.model.series["actor/entropy"].source_at(4) == Source.JSONL,
                       "the JSONL value of step 4")
        assert app.model.series["actor/entropy"].value_at(4) != 0.5  # the file logger's exact value


async def test_a_run_that_crashes_while_watched_says_so_and_what_failed(tmp_path):
    """Steps, then (written while the dashboard follows) the real OOM traceback of corpus 018:
    the header, the title and the findings name the exception line and the step it followed."""
    from tests.corpus import verl_log

    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(12)))
    app = dashboard_on(LocalFile(log, poll_seconds=0.05), app=RecordingApp)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.model.last_step == 12, "the steps")
        with open(log, "ab") as handle:
            handle.write(verl_log("018").read_bytes() + b"\n")
        # The follower may read the traceback half-written (its frames, not yet its last line):
        # the header then names the newest line it has, and the exception once it is read.
        await wait_for(pilot, lambda: "crashed: torch.OutOfMemoryError: CUDA out of memory" in header_text(app),
                       "the crash's exception line in the header", timeout=15)
        assert "crash: torch.OutOfMemoryError" in app.title
        (crash,) = [f for f in app.findings if f.rule == "crash"]
        assert crash.severity == "critical" and crash.first_step == 12
        assert "after step 12" in crash.message
        assert app.bells == 1


def test_a_stall_alone_is_named_with_how_long_in_the_header():
    """The header's verdict for a hung run says so in its first word, and for how long."""
    stalled = Finding("stalled", Severity.CRITICAL)
    stalled.add_hit(None, 7260.0, "no step yet and nothing written for 2 h 01 min; the run may be hung")
    assert run_state([stalled]) == (Severity.CRITICAL, "stalled: no step yet and nothing written for 2 h 01 min")
    nan = Finding("loss-nan", Severity.CRITICAL)
    nan.add_hit(7, float("nan"), "not finite")
    assert run_state([stalled, nan]) == (Severity.CRITICAL, "critical: stalled, loss-nan")
