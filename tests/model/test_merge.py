"""Merging the console, TensorBoard and JSONL values of one run: the exact one wins, its source is kept."""

import math
import struct

from hypothesis import given
from hypothesis import strategies as st

from tests.corpus import verl_log
from tui.model.merge import Source, TaggedSeries, replaces
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import StepRecord

CONSOLE, TENSORBOARD, JSONL = Source.CONSOLE, Source.TENSORBOARD, Source.JSONL


def float32(value: float) -> float:
    """What torch's add_scalar stores (for values within float32's range)."""
    return struct.unpack("f", struct.pack("f", value))[0]


def test_the_file_logger_beats_3_decimal_console_text_in_either_order():
    assert replaces(0.123456789, JSONL, 0.123, CONSOLE)
    assert not replaces(0.123, CONSOLE, 0.123456789, JSONL)


def test_the_file_logger_beats_tensorboards_float32():
    assert replaces(0.123456789, JSONL, float32(0.123456789), TENSORBOARD)
    assert not replaces(float32(0.123456789), TENSORBOARD, 0.123456789, JSONL)


def test_tensorboard_beats_3_decimal_console_text():
    exact = float32(0.123456789)
    assert replaces(exact, TENSORBOARD, 0.123, CONSOLE)
    assert not replaces(0.123, CONSOLE, exact, TENSORBOARD)


def test_full_precision_console_text_beats_its_own_float32_rounding():
    # verl v0.5+ prints repr(): the console has the float64 that TensorBoard rounded.
    printed = 0.30000000000000004
    assert not replaces(float32(printed), TENSORBOARD, printed, CONSOLE)
    assert replaces(printed, CONSOLE, float32(printed), TENSORBOARD)
    assert not replaces(math.nan, TENSORBOARD, math.nan, CONSOLE)
    assert not replaces(math.inf, TENSORBOARD, 1e300, CONSOLE)  # float32 overflows to inf


def test_a_null_nan_does_not_hide_which_infinity_it_was():
    assert not replaces(math.nan, JSONL, math.inf, CONSOLE)
    assert not replaces(math.nan, JSONL, -math.inf, TENSORBOARD)
    assert replaces(math.nan, JSONL, 0.5, CONSOLE)


def test_sources_are_named_for_the_step_detail():
    assert [s.label for s in Source] == ["console log", "TensorBoard events", "file logger (JSONL)"]


def test_the_same_source_again_is_a_re_done_step_and_wins():
    for source in Source:
        assert replaces(1.0, source, 2.0, source)


def test_console_only_series_carry_no_source_bytes():
    series = TaggedSeries()
    for step in range(1, 1000):
        series.set(step, step * 0.5)
    assert series._sources is None
    assert series.source_at(10) is CONSOLE and series.source_at(5000) is None


def test_sources_follow_inserts_replacements_and_refusals():
    series = TaggedSeries()
    for step in (1, 2, 4):
        series.offer(step, 0.1 * step, CONSOLE)
    assert series.offer(4, 0.4004, JSONL)  # replaces the last point
    assert series.offer(3, 0.3003, JSONL)  # a step the console did not have
    assert not series.offer(3, 0.3, CONSOLE)  # the exact value stays
    assert series.offer(0, 9.0, TENSORBOARD)  # inserted in front
    assert list(series.steps) == [0, 1, 2, 3, 4]
    assert list(series.values) == [9.0, 0.1, 0.2, 0.3003, 0.4004]
    assert [series.source_at(s) for s in series.steps] == [TENSORBOARD, CONSOLE, CONSOLE, JSONL, JSONL]
    assert series.offer(5, 0.5, CONSOLE) and series.source_at(5) is CONSOLE


offers = st.lists(st.tuples(st.integers(0, 30),
                            st.sampled_from([0.5, 0.123, 0.123456789, float32(0.123456789),
                                             math.nan, math.inf, -math.inf]),
                            st.sampled_from(list(Source))), max_size=200)


@given(offers)
def test_any_order_of_offers_keeps_the_value_the_rule_picks(sequence):
    series = TaggedSeries()
    expected: dict[int, tuple[float, Source]] = {}
    for step, value, source in sequence:
        kept = expected.get(step)
        taken = series.offer(step, value, source)
        assert taken == (kept is None or replaces(value, source, kept[0], kept[1]))
        if taken:
            expected[step] = (value, source)
    assert list(series.steps) == sorted(expected)
    for step, (value, source) in expected.items():
        assert struct.pack("d", series.value_at(step)) == struct.pack("d", value)
        assert series.source_at(step) is source
    if series._sources is not None:
        assert len(series._sources) == len(series.steps)


def test_exact_values_merge_into_a_real_console_run_without_touching_its_step_index():
    scanner = LogScanner()
    model = RunModel()
    model.apply(scanner.feed(verl_log("032").read_bytes()) + scanner.finish(), now=1.0)
    spans = list(model.step_index.starts), list(model.step_index.ends)
    assert model.series["actor/pg_loss"].value_at(1119) == 0.003  # 3 decimals, as verl ~0.2 printed

    exact = {"actor/pg_loss": 0.0031234567, "only/in_jsonl": 7.0}
    model.apply([StepRecord(1119, exact, 0, 99), StepRecord(1121, {"actor/pg_loss": 1.0}, 99, 200)],
                now=2.0, source=JSONL)
    assert (list(model.step_index.starts), list(model.step_index.ends)) == spans
    assert len(model.step_index) == 1120  # the console's steps: the lines a step detail shows
    assert model.step_count == 1121 and model.last_step == 1121  # a step only the JSONL has yet
    assert model.latest()["only/in_jsonl"] == 7.0
    pg_loss = model.series["actor/pg_loss"]
    assert pg_loss.value_at(1119) == 0.0031234567 and pg_loss.source_at(1119) is JSONL
    assert pg_loss.source_at(1118) is CONSOLE

    scanner = LogScanner()  # the console line read again (a reconnect) does not undo it
    model.apply(scanner.feed(verl_log("032").read_bytes()) + scanner.finish(), now=3.0)
    assert pg_loss.value_at(1119) == 0.0031234567


def test_memory_stays_at_one_byte_per_value_above_the_values():
    keys = [f"group{k % 10}/metric_{k}" for k in range(150)]
    model = RunModel()
    for start in range(1, 2001, 500):
        steps = range(start, start + 500)
        model.apply([StepRecord(s, dict.fromkeys(keys, s * 0.001), s, s + 1) for s in steps], now=0.0)
        model.apply([StepRecord(s, dict.fromkeys(keys, s * 0.0011), 0, 0) for s in steps], now=0.0,
                    source=JSONL)
    values = 2000 * 150
    assert all(isinstance(series.steps, range) for series in model.series.values())
    used = sum(a.buffer_info()[1] * a.itemsize
               for series in model.series.values()
               for a in (series.values, series._sources))
    # 8 (value) + 1 (source) bytes, the steps 1…2000 a range: 100,000 steps × 150 metrics = 135 MB.
    assert used == values * 9


def test_a_column_goes_in_whole_only_after_the_last_step_and_only_from_the_console():
    series = TaggedSeries()
    assert series.extend([1, 2], [0.1, 0.2], CONSOLE)
    assert not series.extend([2, 3], [0.5, 0.3], CONSOLE)  # step 2 is there: offered one by one
    assert not series.extend([3, 4], [0.3, 0.4], JSONL)  # values from elsewhere are weighed
    tagged = TaggedSeries()
    tagged.offer(1, 0.1, JSONL)
    assert not tagged.extend([2], [0.2], CONSOLE)  # a tagged series keeps each value's source
    assert list(series.steps) == [1, 2] and list(series.values) == [0.1, 0.2]
