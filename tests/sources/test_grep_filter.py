"""Reading grep -b output."""

import collections
import subprocess
import sys
from pathlib import Path

from bench.make_log import build
from tests.corpus import CORPUS, all_verl_logs, verl_log
from tui.parsers.log_scanner import NEEDLES, LogScanner
from tui.sources.grep_filter import (
    COMMON_LOG_BYTES,
    GrepOutput,
    grep_command,
    grep_needles,
)


# Seed 001's workload: its reward function's chatter around a real run's step lines.
CHATTER = CORPUS.parent / "bench" / "chatter_log.py"


def test_output_split_across_chunks_and_carriage_returns_inside_lines():
    output = GrepOutput()
    assert output.feed(b"12:step:1 - a:1\n40:(pid=1) \rTraining Progress: 1%|") == [(12, b"step:1 - a:1\n")]
    assert output.feed(b"| 1/9\n") == [(40, b"(pid=1) \rTraining Progress: 1%|| 1/9\n")]


def test_command_quotes_nothing_and_ends_options_before_the_path():
    argv = grep_command([b"step:", b"'loss':"], "-weird name.log")
    assert argv == ["grep", "-a", "-b", "-E", "-e", "step:|'loss':", "--", "-weird name.log"]


def test_every_needle_is_one_literal_alternative_of_the_expression(tmp_path):
    """Characters an extended expression gives a meaning to stand for themselves."""
    needles = [b"%|", b"[prompt]", b"Traceback (most recent call last)", b"a.b*c+d?e{2}^f$g\\h"]
    lines = [b"x %| y", b"[prompt] q", b"Traceback (most recent call last):", b"a.b*c+d?e{2}^f$g\\h",
             b"abbbcd", b"prompt", b"Traceback most recent call last"]
    log = tmp_path / "log"
    log.write_bytes(b"\n".join(lines) + b"\n")
    found = subprocess.run(grep_command(needles, str(log)), capture_output=True,
                           env={"LC_ALL": "C"}).stdout.splitlines()
    assert [line.split(b":", 1)[1] for line in found] == lines[:4]


def test_grep_looks_for_each_needle_from_its_rarest_byte_on():
    assert grep_needles([b"out of memory", b"died unexpectedly", b"died or was killed"]) == (
        b"f memory", b"xpectedly", b"was killed")
    assert grep_needles([b"== Step ", b"core dumped", b"train metrics *****"]) == (b"Step ", b"umped", b"*****")
    assert grep_needles([b"%|", b"Final validation metrics"]) == (
        b"%|", b"Final validation metrics")  # short, or already from a rare byte


def test_a_ray_actor_prefix_is_looked_for_whole():
    assert grep_needles([b"(Runner pid="]) == (b"(Runner pid=",)


def test_every_grep_string_is_a_part_of_its_needle_long_enough_not_to_match_by_chance():
    for needle in NEEDLES:
        (part,) = grep_needles([needle])
        assert part in needle
        assert len(part) >= min(len(needle), 5)
        assert part.decode()  # whole characters: the expression is text


def _chatter_shares(logs: list[Path]) -> dict[int, float]:
    """Each byte's share of the lines of ``logs`` that no needle picks."""
    counts: collections.Counter = collections.Counter()
    for log in logs:
        for line in log.read_bytes().splitlines():
            if not any(needle in line for needle in NEEDLES):
                counts.update(line)
    total = sum(counts.values())
    return {byte: count / total for byte, count in counts.items()}


def test_the_common_bytes_are_those_of_the_corpus_and_both_bench_chatters(tmp_path):
    build(tmp_path / "make.log", 8 << 20)
    subprocess.run([sys.executable, str(CHATTER), str(verl_log("032")), str(tmp_path / "chatter.log"), "8"],
                   check=True, stdout=subprocess.DEVNULL)
    references = [_chatter_shares(all_verl_logs()), _chatter_shares([tmp_path / "make.log"]),
                  _chatter_shares([tmp_path / "chatter.log"])]
    mean = {byte: sum(shares.get(byte, 0.0) for shares in references) / 3 for byte in range(256)
            if not 0x80 <= byte < 0xC0}
    measured = bytes(sorted((b for b, share in mean.items() if share > 0.0005), key=lambda b: (-mean[b], b)))
    assert COMMON_LOG_BYTES == measured


def test_on_every_corpus_log_grep_picks_each_needed_line_and_little_else():
    for log in all_verl_logs():
        wanted = [line for line in log.read_bytes().rstrip(b"\n").split(b"\n")
                  if any(needle in line for needle in NEEDLES)]
        found = subprocess.run(grep_command(NEEDLES, str(log)), capture_output=True,
                               env={"LC_ALL": "C"}).stdout
        picked = [line.rstrip(b"\n") for _, line in GrepOutput().feed(found)]
        assert [line for line in picked if line in wanted] == wanted, log.name
        assert sum(map(len, picked)) <= 1.05 * sum(map(len, wanted)) + 4096, log.name


def test_a_line_grep_picked_for_a_part_of_a_needle_gives_nothing():
    scanner = LogScanner()
    assert scanner.scan_line(b"ERROR: the f memory pool was killed unexpectedly\n", 0) == []
    assert scanner.scan_line(b"ERROR: CUDA out of memory\n", 0)
