"""Step records as columns: the model they make is the one their records make, line by line."""

from __future__ import annotations

import pickle

from tests.corpus import verl_log
from tui.model.merge import Source
from tui.model.run_model import RunModel
from tui.model.step_columns import step_columns
from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import Record, RunEndRecord, StepRecord


def model_state(model: RunModel) -> dict:
    """What a reader of the model sees: every series, the step index, the run's marks."""
    return {
        "series": {key: (list(series.steps), [repr(value) for value in series.values])
                   for key, series in model.series.items()},
        "index": (list(model.step_index.steps), list(model.step_index.starts),
                  list(model.step_index.ends)),
        "marks": (model.dropped_items, model.steps_prefixed, model.last_step_line_end,
                  model.last_new_step_at, model.incidents, model.sample_offsets,
                  model.announced_total, model.progress, model.end_marker_offset),
        "order": list(model.series),  # the panels list keys as first seen
    }


def one_by_one(records: list[Record]) -> dict:
    model = RunModel()
    for record in records:
        model.apply([record], 1.0)
    return model_state(model)


def at_once(records: list[Record]) -> dict:
    model = RunModel()
    model.apply(records, 1.0)
    return model_state(model)


def real_records() -> list[Record]:
    """Corpus 032's whole GRPO run: 1,120 step lines, its progress bars, its end."""
    scanner = LogScanner()
    return scanner.feed(verl_log("032").read_bytes()) + scanner.finish()


def test_a_whole_real_backfill_makes_the_same_model_at_once_as_line_by_line():
    records = real_records()
    assert sum(isinstance(record, StepRecord) for record in records) == 1120
    assert at_once(records) == one_by_one(records)


def test_columns_made_elsewhere_and_pickled_make_the_same_model():
    records = real_records()
    steps = [record for record in records if isinstance(record, StepRecord)]
    others = [record for record in records if not isinstance(record, StepRecord)]
    model = RunModel()
    model.apply([*others, pickle.loads(pickle.dumps(step_columns(steps)))], 1.0)
    assert model_state(model) == one_by_one(records)


def test_lines_with_other_keys_steps_printed_again_and_unreadable_items_fold_as_they_came():
    lines = [
        StepRecord(1, {"a": 1.0, "b": 2.0}, 0, 10),
        StepRecord(2, {"a": 3.0, "b": 4.0}, 10, 20, dropped=1),
        StepRecord(2, {"val/x": 0.5}, 20, 30, prefixed=True),  # a validation line, same step
        StepRecord(3, {}, 30, 40, dropped=2),  # nothing readable: counted, not indexed
        StepRecord(3, {"b": 5.0, "a": 6.0}, 40, 50),
        StepRecord(2, {"a": 7.0}, 50, 60),  # a resumed run prints step 2 again: the later wins
    ]
    for records in (lines, lines[:3], lines[2:5]):
        assert at_once(list(records)) == one_by_one(list(records))
    model = RunModel()
    model.apply(list(lines), 1.0)
    assert list(model.series["a"].values) == [1.0, 7.0, 6.0] and model.dropped_items == 3
    assert not model.steps_prefixed  # the last line's


def test_records_and_columns_in_one_batch_fold_in_their_order():
    first = [StepRecord(5, {"a": 1.0}, 0, 10)]
    again = [StepRecord(5, {"a": 2.0}, 10, 20)]
    model = RunModel()
    model.apply([*first, step_columns(again)], 1.0)
    assert list(model.series["a"].values) == [2.0]
    model.apply([step_columns(first), *again], 1.0)
    assert list(model.series["a"].values) == [2.0]


def test_a_console_backfill_after_a_logger_s_steps_and_end_indexes_as_line_by_line():
    """The backfill's lines go into the index in one piece; what each line would have noted
    (a logger-only step now has its line, a logger's end the run went on past) is noted."""

    def made(console: list[Record], together: bool) -> tuple[dict, int, int | None]:
        model = RunModel()
        model.apply([StepRecord(step, {"a": 0.5}, 0, 0) for step in (1, 2, 9)], 1.0, Source.JSONL)
        model.apply([RunEndRecord(25, by_logger=True)], 1.0)
        for batch in [console] if together else [[line] for line in console]:
            model.apply(batch, 2.0)
        return model_state(model), model.step_count, model._logger_end_at

    lines: list[Record] = [StepRecord(step, {"a": 1.0}, 10 * step, 10 * step + 10) for step in (1, 2, 3)]
    for console in (lines, lines[:2]):
        assert made(console, together=True) == made(console, together=False)
    assert made(lines, True)[1:] == (4, None)  # steps 1-3 and the JSONL's 9; past the end
    assert made(lines[:2], True)[2] == 25  # the lines before the logger's end leave it
