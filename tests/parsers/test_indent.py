"""The indentation a whole paste shares is the paste's, not the log's."""

import pytest

from tui.parsers.indent import common_indent, dedent


@pytest.mark.parametrize(("text", "shared"), [
    (b"    Traceback (most recent call last):\n      File \"a.py\", line 1\n    ValueError: x\n", b"    "),
    (b"\tstep:1 - a:1\n\tstep:2 - a:2\n", b"\t"),
    (b"    a\n\n  \n    b\n", b"    "),  # blank lines (and those that lost their spaces) do not count
    (b"        a\n    b\n", b"    "),  # the shared part of two indentations
    (b"    a\n\r 37%|#  | 11/30\n", b""),  # a tqdm redraw at the start of a line is text
    (b"Traceback (most recent call last):\n  File \"a.py\", line 1\n", b""),
])
def test_the_shared_indentation_is_what_every_non_blank_line_starts_with(text, shared):
    assert common_indent(text) == shared


def test_the_indentation_narrows_as_lines_come_and_stops_at_column_zero():
    first = b"        a\n        b\n"
    known = common_indent(first)
    assert known == b"        "
    assert common_indent(b"    c\n", known=known) == b"    "
    assert common_indent(b"d\n", known=b"    ") == b""
    assert common_indent(b"\n\n") is None  # no line yet: nothing known


def test_only_the_shared_indentation_goes():
    assert dedent("        raise ValueError(x)", "    ") == "    raise ValueError(x)"
    assert dedent("  ", "    ") == ""
    assert dedent("ValueError: x", "") == "ValueError: x"
