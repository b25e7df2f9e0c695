"""The answer of a look for who writes a log: writers by their descriptors' flags (a reader is
no writer), tee's feeders by fd 1 or 2 only, and whatever else a box prints passed over."""

from __future__ import annotations

import os

from tui.parsers.log_writers import parse_log_writers


def test_a_descriptor_opened_to_write_or_to_read_and_write_is_a_writer_and_a_reader_is_not():
    text = (f"writer 10 1 {os.O_WRONLY | os.O_APPEND:o}\n"
            f"writer 11 3 {os.O_RDWR:o}\n"
            f"writer 12 4 {os.O_RDONLY:o}\n"  # tail -f, rlwatch itself
            f"writer 10 2 {os.O_WRONLY:o}\n"
            "writer 13 5 \n")  # its flags unreadable: the process went meanwhile
    assert parse_log_writers(text).writers == {10: (1, 2), 11: (3,)}


def test_tees_feeders_are_those_writing_into_its_pipe_on_fd_1_or_2():
    text = "feeds 20 1 30\nfeeds 21 2 30\nfeeds 22 0 30\nfeeds 23 1 31\n"
    assert parse_log_writers(text).feeds == {30: frozenset({20, 21}), 31: frozenset({23})}


def test_the_reading_around_it_and_broken_lines_are_passed_over():
    text = ("uptime 12.5 3.1\nhz 100\nstat 10 10 (tee) S 9 …\nwchan 10 pipe_read\n"
            "writer x 1 1\nwriter 10 1\nwriter 10 1 0o1\nfeeds 1 2\nwriter 10 1 1 extra\npy-spy \n")
    scan = parse_log_writers(text)
    assert (scan.writers, scan.feeds) == ({}, {})
