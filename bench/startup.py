"""Start-up: ``rlwatch --help`` and ``rlwatch check`` on a small log, against a bare interpreter.

Lazy imports are the point: tensorboard, plotext, asyncssh and Textual load
only when a command needs them. Each command is run several times; the best
time is kept (the others measure the machine's noise).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row  # noqa: E402
from tests.corpus import verl_log  # noqa: E402

SMALL_LOG = verl_log("036")


def best_of(argv: list[str], runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def rows() -> list[Row]:
    rlwatch = [sys.executable, "-m", "tui"]
    bare = best_of([sys.executable, "-c", "pass"])
    help_s = best_of([*rlwatch, "--help"])
    check_s = best_of([*rlwatch, "check", str(SMALL_LOG)])
    return [
        Row("`rlwatch --help`", f"{help_s:.3f} s", f"`python -c pass` {bare:.3f} s", "≤ 0.3 s",
            help_s <= 0.3),
        Row("`rlwatch check` on a small log (036)", f"{check_s:.3f} s", f"`python -c pass` {bare:.3f} s",
            "≤ 1 s", check_s <= 1.0),
    ]


if __name__ == "__main__":
    from bench.table import print_table

    print_table(rows(), "see run_all.py")
