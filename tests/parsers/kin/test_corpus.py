"""Every kin sample, read through the real scanner and RunModel, against what a human read
in its raw text (tests/fixtures/logs/kin/expected.toml)."""

from __future__ import annotations

import math
import sys

import pytest

from tests.corpus import KIN_LOGS, all_kin_logs, kin_log, rlwatch_key, verl_log
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import StepRecord
from tui.rules.crash import judge_failures

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SAMPLES = tomllib.loads((KIN_LOGS / "expected.toml").read_text(encoding="utf-8"))["sample"]


def read(path) -> tuple[RunModel, list]:
    scanner = LogScanner()
    records = scanner.feed(path.read_bytes()) + scanner.finish()
    model = RunModel(str(path))
    model.apply(records, now=0.0)
    return model, records


def state(model: RunModel) -> str:
    if model.finished:
        return "finished"
    if judge_failures(model).cause is not None:
        return "crashed"
    return "running"


def test_every_sample_has_an_expectation_and_a_manifest_row():
    named = {sample["file"] for sample in SAMPLES}
    files = {path.name for path in all_kin_logs()}
    assert named == files
    manifest = (KIN_LOGS / "MANIFEST.md").read_text(encoding="utf-8")
    assert all(f"| {name} |" in manifest for name in files)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s["file"][:-4])
def test_sample_reads_as_a_human_reads_it(sample):
    model, _ = read(kin_log(sample["file"]))
    assert state(model) == sample["state"]
    assert model.last_step == sample.get("last_step")
    assert model.total_steps == sample.get("total_steps")
    latest_step = model.last_step
    for printed, expected in sample.get("values", {}).items():
        series = model.series[rlwatch_key(sample["format"], printed)]
        assert series.last() == (latest_step, pytest.approx(expected, rel=1e-12, abs=0.0)), printed


@pytest.mark.parametrize("path", all_kin_logs(), ids=lambda p: p.name[:-4])
def test_chunks_and_isolated_lines_give_what_one_read_gives(path):
    """Fed in small chunks, or as the needle lines a remote grep sends, the same steps."""
    data = path.read_bytes()
    whole = LogScanner()
    expected = [r for r in whole.feed(data) + whole.finish() if isinstance(r, StepRecord)]
    chunked = LogScanner()
    records = []
    for at in range(0, len(data), 997):
        records += chunked.feed(data[at:at + 997])
    records += chunked.finish()
    assert [r for r in records if isinstance(r, StepRecord)] == expected
    isolated = LogScanner()
    records = []
    offset = 0
    for line in data.split(b"\n"):  # what grep sends: whole lines, \r redraws inside
        if offset < len(data):
            line += b"\n" if offset + len(line) < len(data) else b""
            records += isolated.scan_line(line, offset)
        offset += len(line)
    records += isolated.finish()
    assert [(r.step, r.metrics) for r in records if isinstance(r, StepRecord)] == \
        [(r.step, r.metrics) for r in expected]


def test_no_value_at_a_cut_is_read():
    """A pasted excerpt cut inside a number keeps the items before it, never the cut one."""
    model, _ = read(kin_log("trl_openr1255_grpo_dicts_no_bar.log"))
    assert model.series["completion_length"].last() == (2, 378.24644565582275)
    model, _ = read(kin_log("trl_openr1257_grpo_dicts_cut.log"))
    assert model.series["completion_length"].last()[0] == 1


def test_wrapped_dict_rows_are_joined_back():
    steps = {r.step: r.metrics for r in read(kin_log("mswift4146_dpo_window_wrap_inside_step_value.log"))[1]
             if isinstance(r, StepRecord)}
    assert steps[13]["loss"] == 0.42675275 and steps[13]["nll_loss"] == 1.015625
    steps = {r.step: r.metrics for r in read(kin_log("mswift4146_dpo_dicts_space_joined_wrapped.log"))[1]
             if isinstance(r, StepRecord)}
    assert steps[33]["loss"] == 0.27101392 and steps[32]["loss"] == 0.24961853


def test_history_sparklines_are_not_values():
    model, records = read(kin_log("wandb_rlswarm355_run_history_sparklines_only.log"))
    assert not [r for r in records if isinstance(r, StepRecord)]


def test_the_wandb_summary_does_not_override_printed_steps():
    """Corpus 035 printed every step: its footer adds no step and changes no value."""
    model, records = read(verl_log("035"))
    assert model.last_step == 105
    assert model.series["critic/score/mean"].last() == (105, 0.987)  # the step line's 3 decimals


def test_run_bar_of_the_hf_trainer_is_the_progress_once_a_dict_shows_it():
    model, _ = read(kin_log("trl_dapo_grpo_vl3b_barless_desc_43steps_finished.log"))
    assert (model.progress.done, model.progress.total) == (43, 43)
    assert model.sec_per_it == pytest.approx(80.53)


def test_openrlhf_episode_bars_are_the_run_position():
    model, _ = read(verl_log("044"))
    assert (model.progress.done, model.progress.total) == (12, 12)
    assert model.last_step is None


def test_values_are_finite_where_printed_finite():
    for path in all_kin_logs():
        model, _ = read(path)
        for key, series in model.series.items():
            last = series.last()
            assert last is None or not math.isnan(last[1]) or "nan" in path.read_text(errors="replace"), key
