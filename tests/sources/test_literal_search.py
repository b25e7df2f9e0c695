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
    for workers in (1, 2, 7):
        assert LiteralSearch(NEEDLES).lines(path, end, workers) == expected, (path.name, workers, size)


def test_a_needle_across_a_slice_boundary_is_found_once(tmp_path):
    # 3 slices of a file whose needle straddles each cut: every match seen, each line once.
    body = b"".join(b"x" * (97 + i) + b" Traceback (most recent call last):\n" for i in range(40))
    path = tmp_path / "log"
    path.write_bytes(body)
    lines = LiteralSearch(NEEDLES).lines(path, len(body), workers=3)
    assert len(lines) == 40 and all(b"Traceback" in line for _, line in lines)
    assert [offset for offset, _ in lines] == sorted({offset for offset, _ in lines})
    assert all(body[offset:offset + len(line)] == line for offset, line in lines)


def test_an_empty_range_and_non_ascii_needles(tmp_path):
    path = tmp_path / "log"
    path.write_bytes("训练\nrun.sh: line 3: 12 已杀死 python3 train.py\n".encode())
    assert LiteralSearch(NEEDLES).lines(path, 0) == []
    (offset, line), = LiteralSearch(NEEDLES).lines(path, path.stat().st_size)
    assert offset == len("训练\n".encode()) and "已杀死".encode() in line
