"""Splitting a failure block into lines: prefixes off, the exception line found."""

from __future__ import annotations

from tui.ui.widgets.failure_text import block_lines

RAY_BLOCK = (b"(TaskRunner pid=81) Traceback (most recent call last):\n"
             b'(TaskRunner pid=81)   File "main.py", line 3, in <module>\n'
             b"(WorkerDict pid=90) unrelated chatter\n"
             b"\x1b[36m(TaskRunner pid=81)\x1b[0m RuntimeError: boom\n")


def test_prefixes_are_taken_off_and_the_exception_line_is_found_by_offset() -> None:
    at = RAY_BLOCK.index(b"\x1b[36m")
    lines = block_lines(RAY_BLOCK, 1000, 1000 + at)
    assert [line.text for line in lines] == [
        "Traceback (most recent call last):", '  File "main.py", line 3, in <module>',
        "unrelated chatter", "RuntimeError: boom"]
    assert [line.process for line in lines][:3] == ["(TaskRunner pid=81)", "(TaskRunner pid=81)",
                                                    "(WorkerDict pid=90)"]
    assert [line.exception for line in lines] == [False, False, False, True]
    assert lines[3].offset == 1000 + at


def test_without_an_offset_the_last_line_with_the_exception_text_is_marked() -> None:
    lines = block_lines(RAY_BLOCK, 0, None, "RuntimeError: boom")
    assert [line.exception for line in lines] == [False, False, False, True]


def test_a_bar_redrawn_into_the_traceback_keeps_its_last_drawing() -> None:
    lines = block_lines(b"Traceback:\n 10%|#  | 1/10\r 20%|## | 2/10\rValueError: x\n", 0, None,
                        "ValueError: x")
    assert lines[-1].text == "ValueError: x" and lines[-1].exception
