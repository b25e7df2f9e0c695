"""Cleaning lines: colour codes, Ray prefixes, carriage-return redraws."""

from tui.parsers.text import clean_segments, decode, strip_ansi, strip_ray_prefix


def test_ray_colour_prefix_is_removed():
    raw = "\x1b[2m\x1b[36m(main_task pid=54569)\x1b[0m step:1 - a:1"
    assert clean_segments(raw) == ["step:1 - a:1"]


def test_every_ray_prefix_shape_is_removed():
    for prefix in ("(TaskRunner pid=1) ", "(pid=1) ", "(TaskRunnerV1 pid=1, ip=10.0.0.2) ",
                   "(main_task pid=12345) ", "(raylet) "):
        assert strip_ray_prefix(prefix + "x") == "x"


def test_text_in_parentheses_that_is_not_a_prefix_stays():
    assert strip_ray_prefix("(not a prefix) x") == "(not a prefix) x"


def test_carriage_return_redraws_become_segments():
    line = "(TaskRunner pid=1) \rTraining Progress:  0%|  | 0/9\rTraining Progress: 11%|  | 1/9\n"
    assert clean_segments(line) == ["Training Progress:  0%|  | 0/9", "Training Progress: 11%|  | 1/9"]


def test_invalid_utf8_decodes_with_replacement():
    assert decode(b"step:1 - a:\xff\xfe1") == "step:1 - a:\ufffd\ufffd1"


def test_strip_ansi_leaves_plain_text_alone():
    assert strip_ansi("plain [bold] text") == "plain [bold] text"
