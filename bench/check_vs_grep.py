"""Whole-process cost of reading a big log: ``rlwatch check LOG --json`` against ``grep -c``.

Usage: python bench/check_vs_grep.py [--size-mb 1024] [--pairs 7] [--keep DIR]

``--keep DIR`` builds the logs there (``make_<size>.log``, ``chatter_<size>.log``)
and reuses them on later runs.

Both workloads, built here: bench/make_log.py's (corpus 032's step lines among
short chatter) and the seed-001 workload (bench/chatter_log.py:
paragraphs of Chinese and English reward-function text around the same step
lines). Each pair runs the two whole processes one after the other, in turn,
the file already in the page cache; both write to a pipe that is read to the
end (GNU grep stops at its first match when its output is /dev/null). The
figure is the median of the per-pair ratios, with the spread.

Baseline, exactly: ``LC_ALL=C grep -c step: LOG``. rlwatch runs as installed:
its modules byte-compiled first (pip compiles an installed package's; a checkout
under ``PYTHONDONTWRITEBYTECODE`` would otherwise compile them on every start).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.make_log import build  # noqa: E402
from bench.table import Row, print_table  # noqa: E402
from tests.corpus import verl_log  # noqa: E402

CHATTER = REPO / "bench" / "chatter_log.py"
REAL_LOG = verl_log("032")


def timed(argv: list[str], env: dict | None = None) -> tuple[float, float]:
    """Seconds until ``argv`` has exited and its whole output was read, and the CPU seconds
    (user + sys) of its whole process tree."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert process.stdout is not None
    process.stdout.read()
    _, _, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def pairs(log: Path, count: int) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """(rlwatch, grep) (wall, CPU) seconds, ``count`` alternating pairs after one warm-up of each."""
    rlwatch = [sys.executable, "-m", "tui", "check", str(log), "--json"]
    grep = ["grep", "-c", "step:", str(log)]
    c_locale = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
    timed(rlwatch), timed(grep, c_locale)
    return [(timed(rlwatch), timed(grep, c_locale)) for _ in range(count)]


def logs(folder: Path, size_mb: int) -> list[tuple[str, Path]]:
    """Both workloads' logs of ``size_mb`` in ``folder``, built unless already there."""
    short = folder / f"make_{size_mb}.log"
    chatter = folder / f"chatter_{size_mb}.log"
    if not short.exists():
        build(short, size_mb * 1024 * 1024)
    if not chatter.exists():
        subprocess.run([sys.executable, str(CHATTER), str(REAL_LOG), str(chatter), str(size_mb)],
                       check=True, stdout=subprocess.DEVNULL)
    return [("bench/make_log.py", short), ("seed-001 chatter", chatter)]


def rows(size_mb: int = 1024, count: int = 7, folder: Path | None = None) -> list[Row]:
    """One row per workload: the median of the per-pair ratios, with their spread."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "tui")], check=True,
                   stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as scratch:
        out = []
        for name, log in logs(folder or Path(scratch), size_mb):
            measured = pairs(log, count)
            ratios = [ours[0] / theirs[0] for ours, theirs in measured]
            ratio = statistics.median(ratios)
            out.append(Row(f"`rlwatch check LOG --json`, whole process, {size_mb} MiB {name} log",
                           f"{statistics.median(o[0] for o, _ in measured):.2f} s = {ratio:.2f}× "
                           f"({min(ratios):.2f}–{max(ratios):.2f})",
                           f"`LC_ALL=C grep -c step: LOG` {statistics.median(t[0] for _, t in measured):.2f} s",
                           "≤ 2×", ratio <= 2))
            cpu = [ours[1] / theirs[1] for ours, theirs in measured]
            out.append(Row(f"… its CPU seconds (user + sys, whole process tree), {name} log",
                           f"{statistics.median(o[1] for o, _ in measured):.2f} CPU-s = "
                           f"{statistics.median(cpu):.2f}× ({min(cpu):.2f}–{max(cpu):.2f})",
                           f"`LC_ALL=C grep -c step: LOG` {statistics.median(t[1] for _, t in measured):.2f} CPU-s",
                           "(informative)", True))
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="build the logs here and keep them")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    print_table(rows(args.size_mb, args.pairs, args.keep), "")


if __name__ == "__main__":
    main()
