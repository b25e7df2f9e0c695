"""The feed: a followed log's lines reach the model as they are written."""

import asyncio

from tests.support import until
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.session.feed import Feed
from tui.sources.local_file import LocalFile

# 80–1024 columns: the width at which a step line might be a terminal-wrapped row.
SFT_LINE = b"step:%d - train/loss:1.0045815706253052 - train/lr(1e-3):0.001081081081081081 - x:1\n"


async def test_a_terminal_width_step_line_is_not_held_back_while_following(tmp_path):
    log = tmp_path / "sft.log"
    log.write_bytes(SFT_LINE % 1)
    model = RunModel()
    task = asyncio.create_task(Feed(LocalFile(log, poll_seconds=0.02), model).run(follow=True))
    try:
        await until(lambda: model.last_step == 1)
        with open(log, "ab") as handle:
            handle.write(SFT_LINE % 2)
        await until(lambda: model.last_step == 2)  # with no line after it
        assert model.latest()["train/loss"] == 1.0045815706253052
    finally:
        task.cancel()


def test_settling_keeps_a_line_without_its_newline_waiting():
    scanner = LogScanner()
    assert scanner.feed(SFT_LINE % 1) == []  # could be the first row of a wrapped line
    (record,) = scanner.settle()
    assert record.step == 1
    assert scanner.feed(b"step:2 - a:1") == [] and scanner.settle() == []
