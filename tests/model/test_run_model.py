"""The run model, folded from the records of real corpus logs."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus import verl_log
from tui.model.aliases import (
    DASHBOARD_CONCEPTS,
    ENTROPY,
    STEP_TIME,
    TRAIN_REWARD,
    VALIDATION,
)
from tui.model.merge import Source, TaggedSeries
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import (
    IncidentRecord,
    ProgressRecord,
    RunEndRecord,
    StepRecord,
    TotalStepsRecord,
)


def model_of(prefix: str) -> RunModel:
    scanner = LogScanner()
    data = verl_log(prefix).read_bytes()
    model = RunModel(prefix)
    model.apply(scanner.feed(data) + scanner.finish(), now=100.0)
    return model


def test_grpo_run_fills_every_dashboard_concept():
    model = model_of("032")
    assert model.step_count == 1120 and model.last_step == 1120
    for concept in DASHBOARD_CONCEPTS:
        series, key = model.series_for(concept)
        assert series is not None, concept.title
    assert model.series_for(TRAIN_REWARD)[1] == "critic/score/mean"
    assert model.series_for(VALIDATION)[1] == "val/test_score/openai/gsm8k"
    assert model.latest()["val/test_score/openai/gsm8k"] == 0.697
    assert model.latest()["critic/score/mean"] == 0.981


def test_v01_names_fill_the_same_panels():
    model = model_of("030")
    assert model.series_for(VALIDATION)[1] == "test_score/openai/gsm8k"
    assert model.series_for(ENTROPY)[1] == "actor/entropy_loss"
    assert model.latest()["actor/entropy_loss"] == 0.149
    assert model.series_for(STEP_TIME) == (None, None)  # v0.1 logged no whole-step time


def test_progress_bar_gives_total_rate_and_eta():
    model = model_of("034")
    assert model.total_steps == 210 and model.progress.done == 210
    assert model.sec_per_it is not None and model.eta_s == 0


def test_announced_total_without_a_bar():
    model = RunModel()
    model.apply([TotalStepsRecord(140, 0), StepRecord(10, {"timing_s/step": 2.0}, 0, 1)], now=1.0)
    assert model.total_steps == 140 and model.sec_per_it == 2.0 and model.eta_s == 260.0


def test_sft_run_takes_step_time_from_the_progress_bar():
    model = model_of("025")
    series, key = model.series_for(STEP_TIME)
    assert key == "tqdm s/it" and len(series) > 0


def test_new_step_time_is_the_clock_of_the_newest_step_only():
    model = RunModel()
    model.apply([StepRecord(1, {"a": 1.0}, 0, 10)], now=5.0)
    model.apply([StepRecord(1, {"a": 2.0}, 10, 20)], now=9.0)  # a re-print is not progress
    assert model.last_new_step_at == 5.0
    model.apply([StepRecord(2, {"a": 3.0}, 20, 30)], now=12.0)
    assert model.last_new_step_at == 12.0


def test_a_reprinted_step_moves_its_span_to_the_newer_line():
    model = RunModel()
    model.apply([StepRecord(1, {"a": 1.0}, 0, 10), StepRecord(2, {"a": 1.0}, 10, 20),
                 StepRecord(2, {"b": 1.0}, 50, 60)], now=0)
    assert model.step_index.span(2) == (10, 60) and model.step_index.span(1) == (0, 10)
    assert model.latest() == {"a": 1.0, "b": 1.0}


def test_nan_is_kept_in_latest():
    model = model_of("036")
    assert math.isnan(model.latest()["critic/vf_loss"])


def test_reset_forgets_everything():
    model = model_of("034")
    version = model.version
    model.reset()
    assert model.step_count == 0 and model.progress is None and not model.incidents
    assert model.version == 0 < version


def test_other_progress_bars_do_not_move_the_run():
    model = RunModel()
    model.apply([ProgressRecord("Processed prompts", 16, 16, 12.0, 0.0, 0.8, 0)], now=0)
    assert model.progress is None


def test_incidents_are_collected_in_order():
    model = RunModel()
    model.apply([IncidentRecord("traceback", "Traceback (most recent call last):", 5),
                 IncidentRecord("cuda-oom", "CUDA out of memory", 9)], now=0)
    assert [i.kind for i in model.incidents] == ["traceback", "cuda-oom"]


def test_every_step_holds_the_console_steps_and_those_only_other_loggers_have():
    from tui.model.merge import Source

    model = RunModel()
    console = lambda *steps: model.apply(  # noqa: E731
        [StepRecord(s, {"actor/pg_loss": 0.1}, s * 100, s * 100 + 99) for s in steps], now=1.0)
    jsonl = lambda *steps: model.apply(  # noqa: E731
        [StepRecord(s, {"actor/pg_loss": 0.2}, 0, 0) for s in steps], now=1.0, source=Source.JSONL)
    console(1, 2)
    assert model.every_step() is model.step_index.steps  # no merge while the console has them all
    jsonl(2, 3, 5)
    assert list(model.every_step()) == [1, 2, 3, 5]
    console(3)  # the console catches up with step 3: still once
    jsonl(4)
    assert list(model.every_step()) == [1, 2, 3, 4, 5] and model.step_count == 5
    model.reset()
    jsonl(7)
    assert list(model.every_step()) == [7]


def test_a_loggers_end_is_the_runs_only_while_no_step_follows_it():
    """wandb's footer says the process ended; a log a restarted run appends to has the first
    run's footer before the second run's steps."""
    model = RunModel()
    model.apply([StepRecord(1, {"reward": 0.1}, 0, 99), RunEndRecord(100, by_logger=True)], now=0.0)
    assert model.end_marker_seen and model.finished
    model.apply([StepRecord(1, {"reward": 0.2}, 200, 299)], now=1.0)
    assert not model.end_marker_seen and not model.finished
    model.apply([RunEndRecord(300, by_logger=True)], now=2.0)
    assert model.finished


@settings(max_examples=300)
@given(st.lists(st.tuples(st.integers(0, 12), st.lists(st.sampled_from("abcd"), max_size=4),
                          st.floats(allow_nan=False)), max_size=25),
       st.lists(st.integers(1, 25), max_size=4))
def test_steps_folded_at_once_hold_what_each_value_offered_in_turn_would(lines, cuts):
    """A backfill's lines go in key by key (columns): the series must be the same as
    offering every value of every line in order, whatever the steps and keys
    (steps re-printed or out of order, keys coming and going, chunks of any size)."""
    records = [StepRecord(step, {key: value + i for i, key in enumerate(keys)}, 10 * at, 10 * at + 9)
               for at, (step, keys, value) in enumerate(lines)]
    model = RunModel()
    for chunk in _chunks(records, cuts):
        model.apply(chunk, now=1.0)
    expected: dict[str, TaggedSeries] = {}
    for record in records:
        for key, value in record.metrics.items():
            expected.setdefault(key, TaggedSeries()).offer(record.step, value, Source.CONSOLE)
    assert list(model.series) == list(expected)
    assert {key: (list(s.steps), list(s.values)) for key, s in model.series.items()} == \
        {key: (list(s.steps), list(s.values)) for key, s in expected.items()}


def _chunks(records: list[StepRecord], cuts: list[int]) -> list[list[StepRecord]]:
    """``records`` cut at the given indices, in order."""
    bounds = [0, *sorted(cut for cut in cuts if cut < len(records)), len(records)]
    return [records[start:end] for start, end in zip(bounds, bounds[1:])]
