"""A fleet's rows, pure: the state each run's row takes, the order, the tmux line, the ages."""

from __future__ import annotations

import asyncio

from tests.corpus import REPO
from tests.support import NOW, model_of
from tui.session.feed import Feed
from tui.sources.local_file import LocalFile
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import load_rules
from tui.ui.fleet_rows import VALUE_WIDTH, RowState, age, fleet_line, fleet_row, row_state, worst_first


def judged(prefix: str, written_at: float = NOW):
    model = model_of(prefix, written_at)
    return model, RuleEngine(load_rules()).evaluate(model, NOW)


def test_a_host_that_is_down_makes_a_row_unreachable_unless_its_run_had_crashed():
    model, findings = judged("036")  # a real run whose loss went nan
    assert row_state(model, findings, None, True) == RowState.CRITICAL
    assert row_state(model, findings, "gpu1: connection lost; reconnecting", True) == RowState.UNREACHABLE
    assert row_state(None, [], None, False) == RowState.OPENING


def test_a_row_says_the_run_in_cells_and_the_host_trouble_in_place_of_the_finding():
    model, findings = judged("032")
    row = fleet_row("cola", "gpu1", model, findings, None, None, True, NOW + 90)
    assert (row.name, row.host, row.step) == ("cola", "gpu1", str(model.last_step))
    assert row.since == "1m" and row.accelerators == "-"
    down = fleet_row("cola", "gpu1", model, findings, None, "gpu1: cannot connect: refused", True, NOW)
    assert down.state == RowState.UNREACHABLE and down.worst == "gpu1: cannot connect: refused"
    assert down.step == row.step  # what was read stays shown


def test_number_cells_fit_their_columns_in_fewer_digits_rather_than_cut():
    model, findings = judged("001")  # a real run whose train reward ends at -0.01828
    row = fleet_row("cola", "gpu1", model, findings, None, None, True, NOW)
    assert row.reward == "-0.0183" and len(row.reward) <= VALUE_WIDTH


def test_rows_sort_worst_first_then_by_name():
    rows = [fleet_row(name, "h", None, [], None, problem, False, NOW)
            for name, problem in (("b", None), ("a", "down"), ("c", "down"))]
    assert [(row.name, row.state.value) for row in worst_first(rows)] == [
        ("a", "unreachable"), ("c", "unreachable"), ("b", "opening")]


def test_the_tmux_line_counts_states_worst_first_and_names_the_worst_run():
    model, findings = judged("036")
    rows = [fleet_row("nan", "h", model, findings, None, None, True, NOW),
            fleet_row("new", "h", None, [], None, None, False, NOW)]
    assert fleet_line(rows) == "2 runs: 1 critical 1 opening ✖ nan"
    assert fleet_line(rows[1:]) == "1 run: 1 opening"
    assert fleet_line([]) == "no runs"


def test_ages_count_seconds_then_minutes_then_hours():
    assert [age(s) for s in (-3, 0, 59.9, 60, 3599, 3600, 90000)] == [
        "0s", "0s", "59s", "1m", "59m", "1h00m", "1d01h"]


BAR_8_OF_16 = (b"Training Progress:  50%|#####     | 8/16 [01:20<01:20, 10.00s/it]\n"
               b"step:8 - critic/score/mean:0.5 - timing_s/step:10\n")


def _row(data: bytes, now: float):
    scanner, model = LogScanner(), RunModel()
    model.apply(scanner.feed(data) + scanner.finish(), now=NOW)
    model.note_write(NOW)
    return fleet_row("cola", "gpu1", model, RuleEngine(load_rules()).evaluate(model, now), None, None,
                     True, now)


def test_only_a_running_run_has_an_eta_in_its_row():
    assert _row(BAR_8_OF_16, NOW + 5).eta == "1m20s"
    crashed = _row(BAR_8_OF_16 + b"Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n"
                   b"RuntimeError: boom\n", NOW + 5)
    assert crashed.state == RowState.CRASHED and crashed.eta == "—"
    silent = _row(BAR_8_OF_16, NOW + 600)  # ten minutes since a step that takes 10 s: no frozen ETA
    assert silent.eta == "—"


def test_a_crash_row_names_the_rank_and_host_that_failed():
    log = REPO / "tests" / "fixtures" / "logs" / "generated" / "ddp" / "gloo_rank1_sigkill.log"
    model = RunModel()
    asyncio.run(Feed(LocalFile(log), model).run(follow=False))  # as a fleet's session reads it
    findings = RuleEngine(load_rules()).evaluate(model, NOW)
    row = fleet_row("ddp", "gpu1", model, findings, None, None, True, NOW)
    assert row.state == RowState.CRASHED
    assert row.worst == "crash: rank 1 on localhost: traceback : Signal 9 (SIGKILL) received by PID 27715"
