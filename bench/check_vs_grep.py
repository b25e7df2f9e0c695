"""Whole-process cost of reading a big log: ``rlwatch check LOG --json`` against ``grep -c``.

Usage: python bench/check_vs_grep.py [--size-mb 1024] [--pairs 7] [--keep DIR]

Both workloads, built here: bench/make_log.py's (corpus 032's step lines among
short chatter) and the seed-001 workload (../shared/bench/chatter_log.py:
paragraphs of Chinese and English reward-function text around the same step
lines). Each pair runs the two whole processes one after the other, in turn,
the file already in the page cache; both write to a pipe that is read to the
end (GNU grep stops at its first match when its output is /dev/null). The
figure is the median of the per-pair ratios, with the spread.

Baseline, exactly: ``LC_ALL=C grep -c step: LOG``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.make_log import build  # noqa: E402

CHATTER = REPO.parent / "shared" / "bench" / "chatter_log.py"
REAL_LOG = next((REPO.parent / "shared" / "corpus" / "verl_logs").glob("032_*.log"))


def timed(argv: list[str], env: dict | None = None) -> float:
    """Seconds until ``argv`` has exited and its whole output was read."""
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def pairs(log: Path, count: int) -> list[tuple[float, float]]:
    """(rlwatch, grep) seconds, ``count`` alternating pairs after one warm-up of each."""
    rlwatch = [sys.executable, "-m", "tui", "check", str(log), "--json"]
    grep = ["grep", "-c", "step:", str(log)]
    c_locale = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
    timed(rlwatch), timed(grep, c_locale)
    return [(timed(rlwatch), timed(grep, c_locale)) for _ in range(count)]


def report(name: str, measured: list[tuple[float, float]]) -> str:
    ratios = [ours / theirs for ours, theirs in measured]
    return (f"| {name} | {statistics.median(o for o, _ in measured):.2f} s | "
            f"{statistics.median(t for _, t in measured):.2f} s | "
            f"{statistics.median(ratios):.2f}× ({min(ratios):.2f}–{max(ratios):.2f}) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="build the logs here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        short = folder / f"make_{args.size_mb}.log"
        chatter = folder / f"chatter_{args.size_mb}.log"
        if not short.exists():
            build(short, args.size_mb * 1024 * 1024)
        if not chatter.exists():
            subprocess.run([sys.executable, str(CHATTER), str(REAL_LOG), str(chatter),
                            str(args.size_mb)], check=True, stdout=subprocess.DEVNULL)
        print("| workload | rlwatch check --json | LC_ALL=C grep -c step: | ratio (spread) |")
        print("|---|---|---|---|")
        for name, log in (("bench/make_log.py", short), ("seed-001 chatter", chatter)):
            print(report(f"{name}, {args.size_mb} MiB", pairs(log, args.pairs)), flush=True)


if __name__ == "__main__":
    main()
