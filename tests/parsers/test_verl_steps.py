"""verl step lines: ``step:N - key:value - …`` wherever it sits in a line."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.parsers.verl_steps import find_step, parse_items, split_item


def test_step_line_at_start():
    assert find_step("step:12 - a:1") == (12, 10)


def test_step_line_glued_to_a_tqdm_bar():
    segment = "Epoch 1/6:   5%|█▎    | 3/62 [00:23<07:21,  7.48s/it]step:4 - train/loss:1.0"
    step, at = find_step(segment)
    assert step == 4
    assert parse_items(segment[at:]) == ({"train/loss": 1.0}, 0)


def test_global_step_inside_a_line_is_not_a_step_line():
    assert find_step("training/global_step:34 - x:1") is None
    assert find_step("saving global_step:34 - x:1") is None


def test_keys_with_punctuation_and_capitals():
    metrics, dropped = parse_items(
        "critic/lr(1e-4):0.000 - val-core/openai/gsm8k/acc/best@4/mean:0.5 - "
        "Tokens/Sec/GPU:1234.5 - val/test_score/:0.25 - train/time(s):3.0"
    )
    assert dropped == 0
    assert metrics == {"critic/lr(1e-4)": 0.0, "val-core/openai/gsm8k/acc/best@4/mean": 0.5,
                       "Tokens/Sec/GPU": 1234.5, "val/test_score/": 0.25, "train/time(s)": 3.0}


def test_a_duplicate_key_keeps_its_last_value():
    metrics, _ = parse_items("actor/reward_kl_penalty:0.1 - x:2 - actor/reward_kl_penalty:0.3")
    assert metrics["actor/reward_kl_penalty"] == 0.3


def test_a_data_source_with_a_colon_splits_at_the_last_colon():
    metrics, _ = parse_items("val/test_score/hf:gsm8k:0.5")
    assert metrics == {"val/test_score/hf:gsm8k": 0.5}


def test_negative_and_numpy_values_do_not_break_the_separator():
    metrics, dropped = parse_items("a:-0.5 - b:np.float64(-0.25) - c:np.int32(2) - d:nan")
    assert dropped == 0
    assert metrics["a"] == -0.5 and metrics["b"] == -0.25 and metrics["c"] == 2.0
    assert math.isnan(metrics["d"])


def test_unreadable_items_are_counted_and_the_rest_kept():
    metrics, dropped = parse_items("a:1 - junk without colon - b:np.float64(0.1 - c:3 -")
    assert metrics == {"a": 1.0, "c": 3.0}
    assert dropped == 2


# Pieces of items, plain and odd: whatever a line is made of, it must read as its
# items read one by one (``parse_items`` reads plain lines a faster way: as JSON).
_KEYS = st.text(alphabet='ab/_:-. \t\x1c()٣",\\{}[]', max_size=6)
_VALUES = st.sampled_from(["0.5", "-1", "1e-3", "1.", ".5", "nan", "-Infinity", "1_0", "True", "",
                           "np.float64(0.25)", "np.int32(2)", "np.float64(1_0)", "np.bool_(True)",
                           "np.float64(0.1", "٣", "0x1", "1 ", " 2", "3:4",
                           "NaN", "Infinity", "-0", "00", "+1", "1E5", "1e400", "2,", "3}", '4"', "[5]",
                           "{}", "true", "null", "np.x(true)", "np.x(NaN)"]) | st.text("0123456789.e-+_", max_size=5)


@settings(max_examples=500)
@given(st.lists(st.tuples(_KEYS, _VALUES), max_size=6), st.sampled_from(["", " -", " - ", "  "]))
def test_a_line_reads_as_its_items_read_one_by_one(items, tail):
    text = " - ".join(f"{key}:{value}" for key, value in items) + tail
    metrics, dropped = parse_items(text)
    text = text.rstrip().removesuffix(" -")
    one_by_one = [split_item(item) for item in text.split(" - ")]
    readable = [(key, value) for key, value in filter(None, one_by_one) if value is not None]
    assert {key: repr(value) for key, value in metrics.items()} == {key: repr(value) for key, value in readable}
    assert list(metrics) == list(dict(readable))
    assert dropped == len(one_by_one) - len(readable)
