"""Hyperscan's line search picks exactly the lines grep picks, across slice boundaries too."""

import subprocess

import pytest

from tests.corpus import all_verl_logs
from tui.parsers.log_scanner import NEEDLES
from tui.sources.grep_filter import GrepOutput
from tui.sources.literal_search import LiteralSearch


def grep_lines(path, needles) -> list[tuple[int, bytes]]:
    found = subprocess.run(["grep", "-a", "-b", "-F", *[a for n in needles for a in ("-e", n.decode())],
                            "--", str(path)], capture_output=True, env={"LC_ALL": "C"}).stdout
    return [(offset, line if line.endswith(b"\n") else line + b"\n")
            for offset, line in GrepOutput().feed(found)]


@pytest.mark.parametrize("path", all_verl_logs(), ids=lambda p: p.name[:3])
def test_the_same_lines_as_grep_with_the_whole_needles_on_every_corpus_log(path):
    size = path.stat().st_size
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end == 0:
        return
    expected = [(offset, line) for offset, line in grep_lines(path, NEEDLES) if offset < end]
    search = LiteralSearch(NEEDLES)
    for workers, chunk in ((1, 1 << 24), (2, 4096), (7, 333)):
        assert search.lines(path, end, workers, chunk) == expected, (path.name, workers, chunk, size)


def test_slices_and_chunks_cut_at_line_starts_so_every_line_is_found_once(tmp_path):
    # Rough cuts and chunk sizes fall inside the needles: every match is still seen, each line once.
    body = b"".join(b"x" * (97 + i) + b" Traceback (most recent call last):\n" for i in range(40))
    path = tmp_path / "log"
    path.write_bytes(body)
    lines = LiteralSearch(NEEDLES).lines(path, len(body), workers=3, chunk_bytes=500)
    assert len(lines) == 40 and all(b"Traceback" in line for _, line in lines)
    assert [offset for offset, _ in lines] == sorted({offset for offset, _ in lines})
    assert all(body[offset:offset + len(line)] == line for offset, line in lines)


def test_an_empty_range_and_non_ascii_needles(tmp_path):
    path = tmp_path / "log"
    path.write_bytes("训练\nrun.sh: line 3: 12 已杀死 python3 train.py\n".encode())
    assert LiteralSearch(NEEDLES).lines(path, 0) == []
    (offset, line), = LiteralSearch(NEEDLES).lines(path, path.stat().st_size)
    assert offset == len("训练\n".encode()) and "已杀死".encode() in line


def test_a_line_longer_than_a_chunk_is_read_whole(tmp_path):
    path = tmp_path / "log"
    long_line = b"y" * 5000 + b" step:2 - a:2\n"
    path.write_bytes(b"step:1 - a:1\n" + long_line + b"step:3 - a:3\n")
    found = LiteralSearch(NEEDLES).lines(path, path.stat().st_size, workers=1, chunk_bytes=1024)
    assert [line for _, line in found] == [b"step:1 - a:1\n", long_line, b"step:3 - a:3\n"]


def test_a_log_truncated_while_it_is_scanned_gives_what_was_there(tmp_path):
    # Asked for more than the file holds now (a rotation cut it): a short read, no error.
    path = tmp_path / "log"
    path.write_bytes(b"step:1 - a:1\nchatter\n")
    found = LiteralSearch(NEEDLES).lines(path, 10_000, workers=2, chunk_bytes=8)
    assert found == [(0, b"step:1 - a:1\n")]


def test_slices_come_in_file_order_four_a_thread_and_together_are_the_lines(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    body = b"".join(b"chatter %d\nstep:%d - a:1\n" % (i, i) for i in range(400))
    path = tmp_path / "log"
    path.write_bytes(body)
    search = LiteralSearch(NEEDLES)
    with ThreadPoolExecutor(2) as pool:
        parts = [part.result() for part in search.slices(path, len(body), pool, 2)]
    assert len(parts) == 8 and all(parts)
    assert [line for part in parts for line in part] == search.lines(path, len(body))
    assert [offset for part in parts for offset, _ in part] == sorted(
        offset for part in parts for offset, _ in part)


def test_slices_read_the_file_there_when_they_were_asked_for_even_if_it_is_replaced(tmp_path):
    import os
    import threading
    from concurrent.futures import ThreadPoolExecutor

    old = b"".join(b"chatter\nstep:%d - a:1\n" % i for i in range(200))
    path = tmp_path / "log"
    path.write_bytes(old)
    rotated = tmp_path / "new"
    rotated.write_bytes(b"x" * len(old))
    search = LiteralSearch(NEEDLES)
    release = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(release.wait)  # the one thread is busy: no slice has started yet
        parts = search.slices(path, len(old), pool, 1)
        os.replace(rotated, path)  # a rotation puts another file under the name
        release.set()
        found = [line for part in parts for line in part.result()]
    assert len(found) == 200


def test_slices_are_scanned_at_most_a_thread_apiece_ahead_of_the_caller(tmp_path):
    # A log of nothing but step lines matches whole: were every slice scanned at once, a
    # million-step log's gigabyte of lines would be held before the first were parsed.
    from concurrent.futures import ThreadPoolExecutor

    class CountingPool(ThreadPoolExecutor):
        submitted = 0

        def submit(self, *args, **kwargs):
            self.submitted += 1
            return super().submit(*args, **kwargs)

    body = b"".join(b"step:%d - a:1\n" % i for i in range(400))
    path = tmp_path / "log"
    path.write_bytes(body)
    search = LiteralSearch(NEEDLES)
    with CountingPool(2) as pool:
        parts = search.slices(path, len(body), pool, 2)
        assert pool.submitted == 3  # the first slice and two ahead of it
        first = next(parts).result()
        assert pool.submitted == 4
        rest = [line for part in parts for line in part.result()]
    assert pool.submitted == 8
    assert first + rest == search.lines(path, len(body))


def test_slices_closed_early_close_the_file_once_those_started_are_done(tmp_path):
    import os
    from concurrent.futures import ThreadPoolExecutor

    body = b"".join(b"step:%d - a:1\n" % i for i in range(400))
    path = tmp_path / "log"
    path.write_bytes(body)
    before = len(os.listdir("/proc/self/fd"))
    with ThreadPoolExecutor(2) as pool:
        parts = LiteralSearch(NEEDLES).slices(path, len(body), pool, 2)
        next(parts).result()
        parts.close()
    assert len(os.listdir("/proc/self/fd")) == before
