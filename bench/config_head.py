"""Reading a run's config from the head of its log, against scanning the same bytes.

``rlwatch compare`` reads each run's first 512 kB once (``parse_run_config``).
Baseline: the log scanner (the step, progress and incident grammars) on the
same bytes, the cost every byte of a log already pays. Heads: the corpus's
slowest real one (035: a Megatron config of 280 keys behind Ray's prefix), and
a chatty one (512 kB of ``INFO: …`` lines, which look like YAML: before the
parser stepped over a block that is not a config, this took minutes).
Best of several runs. The config is read once per run, so the target is a time a
user does not notice, not a ratio: the scanner does less per byte (it matches fixed
strings first), and a head is read once where a log's bytes stream for days.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row  # noqa: E402
from tui.parsers.log_scanner import LogScanner  # noqa: E402
from tests.corpus import verl_log  # noqa: E402
from tui.parsers.run_config import CONFIG_HEAD_BYTES, parse_run_config  # noqa: E402


def best_of(work: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def scanned(head: bytes) -> None:
    scanner = LogScanner()
    scanner.feed(head)
    scanner.finish()


def rows() -> list[Row]:
    real = verl_log("035").read_bytes()[:CONFIG_HEAD_BYTES]
    chatty = b"".join(b"INFO: line %d of a chatty library\n" % i for i in range(20_000))[:CONFIG_HEAD_BYTES]
    out = []
    for name, head in (("035's head (Ray prefix, 280 keys)", real), ("512 kB of `INFO: …` lines", chatty)):
        config_s = best_of(lambda: parse_run_config(head))
        scan_s = best_of(lambda: scanned(head))
        out.append(Row(f"config from {name}", f"{config_s * 1000:.0f} ms", f"scanner {scan_s * 1000:.0f} ms",
                       "≤ 0.25 s (once per run)", config_s <= 0.25))
    return out


if __name__ == "__main__":
    from bench.table import print_table

    print_table(rows(), "see config_head.py")
