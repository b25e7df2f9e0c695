"""Muting a finding in the findings screen: shown as muted, not counted in the header, kept for
the run across restarts, and undone by the same key — the real app on a real log."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from tests.support import RecordingApp, dashboard_on, header_text, step_lines, wait_for
from tui.session.run_mutes import RunMutes
from tui.sources.local_file import LocalFile
from tui.ui.screens.findings import FindingsScreen


def rows(app) -> dict[str, str]:
    """Each finding's rule and the mark of its row."""
    table = app.screen.query_one(DataTable)
    return {str(table.get_row_at(i)[1]): str(table.get_row_at(i)[0]) for i in range(table.row_count)}


async def press_m_on(app, pilot, rule: str) -> None:
    table = app.screen.query_one(DataTable)
    row = next(i for i in range(table.row_count) if str(table.get_row_at(i)[1]) == rule)
    table.move_cursor(row=row)
    await pilot.press("m")


def app_on(log: Path, state: Path) -> RecordingApp:
    app = dashboard_on(LocalFile(log, poll_seconds=0.05), app=RecordingApp, mutes=RunMutes(str(log), state))
    assert isinstance(app, RecordingApp)
    return app


async def test_m_mutes_a_finding_for_this_run_and_m_again_unmutes_it(tmp_path):
    # 032's first 30 steps: the entropy left its band at step 21 and the train reward is 21%
    # above validation at step 30 (two warnings); the KL and clip fraction are notes.
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(30)))
    state = tmp_path / "state"
    app = app_on(log, state)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: "2 warnings" in header_text(app), "two warnings")
        await pilot.press("f")
        assert isinstance(app.screen, FindingsScreen)
        assert rows(app)["kl-high"] == "· note" and rows(app)["entropy-low"] == "▲ WARN"
        await press_m_on(app, pilot, "entropy-low")
        await wait_for(pilot, lambda: rows(app)["entropy-low"] == "– muted", "the muted mark")
        await press_m_on(app, pilot, "val-gap")
        await wait_for(pilot, lambda: rows(app)["val-gap"] == "– muted", "the second muted mark")
        await pilot.press("escape")
        await wait_for(pilot, lambda: "all rules hold" in header_text(app), "a quiet header")
    assert RunMutes(str(log), state).load() == {"entropy-low": 30, "val-gap": 30}

    again = app_on(log, state)  # opened again: the run's mutes are remembered
    async with again.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: again.findings and "all rules hold" in header_text(again), "muted")
        await pilot.press("f")
        await press_m_on(again, pilot, "entropy-low")
        await wait_for(pilot, lambda: rows(again)["entropy-low"] == "▲ WARN", "unmuted")
        await pilot.press("escape")
        await wait_for(pilot, lambda: "1 warning" in header_text(again), "one warning back")
    assert RunMutes(str(log), state).load() == {"val-gap": 30}
    # Another run's mutes are its own.
    assert RunMutes(str(tmp_path / "other.log"), state).load() == {}


def test_an_unreadable_mute_file_mutes_nothing(tmp_path):
    mutes = RunMutes("run", tmp_path)
    mutes.path.write_text("{not json")
    assert mutes.load() == {}
    mutes.path.write_text('{"muted": ["kl-high"]}')
    assert mutes.load() == {}
    mutes.path.write_text('{"muted": {"kl-high": null, "step-time": 160, "x": "y", "z": true}}')
    assert mutes.load() == {"kl-high": None, "step-time": 160}
