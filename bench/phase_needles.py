"""What the phase lines' needles (tui/parsers/stall_evidence.py) cost the box's grep.

    python bench/phase_needles.py [--logs DIR] [--size-mb 128] [--tries 5]

A stall names its phase from lines the scanner picks by needle, locally and through the
box's grep on a remote backfill; each needle costs grep a little on every byte. This runs
``grep -a -b -E`` as the box does, with the scanner's needles as grep looks for them
(``grep_needles``) and with the same set less the phase needles, alternating, over both
workloads of bench/check_vs_grep.py (bench/make_log.py's log and seed 001's chatter), and
prints each workload's median CPU ratio (with / without) and the spread of the tries.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.check_vs_grep import logs, timed  # noqa: E402
from tui.parsers.log_scanner import NEEDLES  # noqa: E402
from tui.parsers.stall_evidence import phase_needles  # noqa: E402
from tui.sources.grep_filter import grep_command, grep_needles  # noqa: E402

C_LOCALE = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}


def cpu_ratios(log: Path, tries: int) -> list[float]:
    """grep CPU with the phase needles over grep CPU without them, one ratio per try."""
    phases = {needle.encode() for needle in phase_needles()}
    with_phases = grep_command(grep_needles(NEEDLES), str(log))
    without = grep_command(grep_needles([n for n in NEEDLES if n not in phases]), str(log))
    timed(with_phases, C_LOCALE), timed(without, C_LOCALE)
    return [timed(with_phases, C_LOCALE)[1] / timed(without, C_LOCALE)[1] for _ in range(tries)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", type=Path, default=Path("/tmp/bench"))
    parser.add_argument("--size-mb", type=int, default=128)
    parser.add_argument("--tries", type=int, default=5)
    args = parser.parse_args()
    args.logs.mkdir(parents=True, exist_ok=True)
    for name, log in logs(args.logs, args.size_mb):
        ratios = cpu_ratios(log, args.tries)
        print(f"{name}: grep CPU with the phase needles {statistics.median(ratios):.2f}x "
              f"(tries {min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
