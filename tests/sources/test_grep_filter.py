"""Reading grep -b output."""

from tui.sources.grep_filter import GrepOutput, grep_command


def test_output_split_across_chunks_and_carriage_returns_inside_lines():
    output = GrepOutput()
    assert output.feed(b"12:step:1 - a:1\n40:(pid=1) \rTraining Progress: 1%|") == [(12, b"step:1 - a:1\n")]
    assert output.feed(b"| 1/9\n") == [(40, b"(pid=1) \rTraining Progress: 1%|| 1/9\n")]


def test_command_quotes_nothing_and_ends_options_before_the_path():
    argv = grep_command([b"step:", b"'loss':"], "-weird name.log")
    assert argv == ["grep", "-a", "-b", "-F", "-e", "step:", "-e", "'loss':", "--", "-weird name.log"]
