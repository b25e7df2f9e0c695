"""Printed reward-manager samples, read from the corpus."""

from tests.corpus import verl_log
from tui.parsers.samples import parse_samples


def test_gsm8k_sample_from_the_grpo_run():
    text = verl_log("032").read_bytes()[:200_000].decode()
    samples = parse_samples(text)
    first = samples[0]
    assert first.prompt.startswith("<｜begin▁of▁sentence｜>User: Janet’s ducks lay 16 eggs")
    assert first.prompt.endswith("Assistant:")
    assert first.response.startswith("Janet's ducks lay 16 eggs per day.")
    assert first.response.endswith("#### 18<｜end▁of▁sentence｜>")
    assert first.ground_truth == "18" and first.score == 1.0


def test_sample_behind_ray_prefixes_with_blank_lines():
    samples = parse_samples(verl_log("027").read_text())
    assert len(samples) == 1
    sample = samples[0]
    assert sample.prompt.startswith("system\nYou are a helpful AI assistant named SmolLM")
    assert "How many z are there in word o-u-z-z-z-z-z-z?" in sample.prompt
    assert sample.response.startswith("o != z.\nu != z.")
    assert sample.score is not None


def test_dict_scores_become_extra_fields_and_the_block_ends_at_plain_text():
    text = "[prompt] q\n[response] a\n[ground_truth] 4\n[score] 0.5\n[acc] 1\n[pred] 4\nunrelated\n"
    (sample,) = parse_samples(text, base_offset=100)
    assert sample.score == 0.5 and sample.extra == {"acc": "1", "pred": "4"}
    assert sample.offset == 100
