"""verl's file-logger JSONL in both spellings, streamed, cut by restarts, and mixed with junk."""

import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.corpus import verl_log
from tui.parsers.log_scanner import MAX_LINE_BYTES, LogScanner
from tui.parsers.records import StepRecord
from tui.parsers.verl_jsonl import JsonlScanner, parse_record

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "jsonl"
V06 = (FIXTURES / "v0.6_json_dumps.jsonl").read_bytes()
V071 = (FIXTURES / "v0.7.1_orjson.jsonl").read_bytes()
ADDED = {"actor/grad_norm"}  # made non-finite at steps 2 and 3 (see the fixtures' SOURCE.md)


def scan(data: bytes) -> list[StepRecord]:
    scanner = JsonlScanner()
    return scanner.feed(data) + scanner.finish()


def console_steps() -> dict[int, dict[str, float]]:
    """Steps 0–4 of corpus log 047 as the console parser reads them."""
    scanner = LogScanner()
    records = scanner.feed(verl_log("047").read_bytes()) + scanner.finish()
    return {r.step: r.metrics for r in records if isinstance(r, StepRecord) and r.step <= 4}


def test_both_spellings_hold_exactly_what_the_console_printed():
    console = console_steps()
    for data in (V06, V071):
        records = scan(data)
        assert [r.step for r in records] == [0, 1, 2, 3, 4]
        for record in records:
            printed = console[record.step]
            assert set(record.metrics) == set(printed)  # strings and lists skipped
            for key, value in printed.items():
                if not (key in ADDED and record.step in (2, 3)):
                    assert record.metrics[key] == value, (record.step, key)


def test_json_dumps_nan_and_infinity_and_orjson_null():
    old = {r.step: r.metrics.get("actor/grad_norm") for r in scan(V06)}
    new = {r.step: r.metrics.get("actor/grad_norm") for r in scan(V071)}
    assert math.isnan(old[2]) and old[3] == math.inf
    assert math.isnan(new[2]) and math.isnan(new[3])  # orjson writes NaN and inf as null
    assert old[1] == new[1] == 0.15237574465572834


def test_null_is_a_none_in_the_json_dumps_spelling_and_is_skipped():
    assert parse_record(b'{"step": 3, "data": {"a": null, "b": 1}}').metrics == {"b": 1.0}
    assert math.isnan(parse_record(b'{"step":3,"data":{"a":null,"b":1}}').metrics["a"])


def test_booleans_count_as_the_console_prints_them():
    assert parse_record(b'{"step":1,"data":{"ok":true,"bad":false}}').metrics == {"ok": 1.0, "bad": 0.0}


def test_each_record_knows_the_bytes_of_its_line():
    for data in (V06, V071):
        for record in scan(data):
            line = data[record.offset:record.end]
            assert line.endswith(b"\n") and parse_record(line) == StepRecord(
                record.step, record.metrics, 0, len(line))


@given(st.lists(st.integers(0, len(V071)), max_size=8))
def test_any_chunking_gives_the_same_records(cuts):
    scanner = JsonlScanner()
    records = []
    for start, end in zip([0, *sorted(cuts)], [*sorted(cuts), len(V071)]):
        records += scanner.feed(V071[start:end])
    records += scanner.finish()
    assert records == scan(V071)


def test_a_line_without_its_newline_waits_for_the_writer():
    scanner = JsonlScanner()
    first_line = V071.index(b"\n") + 1
    assert len(scanner.feed(V071[:first_line + 100])) == 1
    assert scanner.consumed == first_line
    assert [r.step for r in scanner.feed(V071[first_line + 100:])] == [1, 2, 3, 4]


def test_a_file_cut_by_a_killed_run_keeps_every_whole_line():
    # v0.6 buffered its writes: a killed run leaves half a line; the restart truncates the file.
    cut = V06[:V06.index(b'{"step": 3') + 500]
    scanner = JsonlScanner()
    records = scanner.feed(cut) + scanner.finish()
    assert [r.step for r in records] == [0, 1, 2] and scanner.skipped_lines == 1


def test_nul_bytes_left_by_a_writer_past_the_truncation_do_not_hide_records():
    # A writer that keeps its offset after another process truncated the file leaves a hole.
    data = b"\x00" * 4096 + V071
    assert [r.step for r in scan(data)] == [0, 1, 2, 3, 4]


def test_junk_lines_are_counted_and_the_rest_is_read():
    junk = [b"not json at all\n", b"[1, 2, 3]\n", b'{"step": "7", "data": {}}\n', b'{"step": 1}\n',
            b'{"step": true, "data": {}}\n', b"{" * 100_000 + b"\n", b"\xff\xfe{}\n",
            b'{"step": 9, "data": {"big": ' + b"9" * 400 + b"}}\n"]
    scanner = JsonlScanner()
    records = scanner.feed(b"".join(junk) + V06 + b"\n\n") + scanner.finish()
    assert [r.step for r in records] == [9, 0, 1, 2, 3, 4]
    assert records[0].metrics == {}  # an integer past float range is not a metric
    assert scanner.skipped_lines == len(junk) - 1


def test_a_runaway_line_is_dropped_to_keep_memory_bounded():
    scanner = JsonlScanner()
    assert scanner.feed(b"x" * (MAX_LINE_BYTES + 1)) == []
    assert scanner.skipped_lines == 1 and scanner.consumed == MAX_LINE_BYTES + 1
    assert [r.step for r in scanner.feed(b"\n" + V071)] == [0, 1, 2, 3, 4]


@given(st.binary(max_size=2000))
def test_no_bytes_make_it_raise(data):
    for record in scan(data):
        assert isinstance(record.step, int)
        assert all(isinstance(value, float) for value in record.metrics.values())


def test_a_record_behind_a_hole_over_the_line_limit_is_read():
    data = b"\x00" * (MAX_LINE_BYTES + 10) + V071
    assert [r.step for r in scan(data)] == [0, 1, 2, 3, 4]
