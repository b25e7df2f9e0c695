"""verl's per-step JSONL sample dumps."""

import math

from tui.parsers.rollout_dumps import parse_dump


def test_rows_with_extras_nan_and_a_cut_last_line():
    data = (b'{"input": "q1", "output": "a1", "gts": "4", "score": 1.0, "step": 3, "acc": true}\n'
            b'{"input": "q2", "output": "a2", "gts": ["x"], "score": NaN, "step": 3}\n'
            b'{"input": "q3", "outp')
    first, second = parse_dump(data)
    assert (first.prompt, first.response, first.ground_truth, first.score) == ("q1", "a1", "4", 1.0)
    assert first.extra == {"acc": "true"} and second.offset == 82
    assert second.ground_truth == '["x"]' and math.isnan(second.score)


def test_junk_is_skipped():
    assert parse_dump(b"\xff\xfe\nnot json\n[1, 2]\n") == []
