"""What the phase lines' needles (tui/parsers/stall_evidence.py) cost the box's grep.

    python bench/phase_needles.py [--logs DIR] [--size-mb 128] [--tries 5]
                                  [--kinds rollout,collective] [--part NEEDLE=PART ...]

A stall names its phase from lines the scanner picks by needle, locally and through the
box's grep on a remote backfill; each needle costs grep a little on every byte. This runs
``grep -a -b -E`` as the box does, with the scanner's needles as grep looks for them
(``grep_needles``) and with the same set less the needles of the phase kinds measured (all
of them unless ``--kinds`` names some; a needle another kind also needs stays), alternating,
over both workloads of bench/check_vs_grep.py (bench/make_log.py's log and seed 001's
chatter), and prints each workload's median CPU ratio (with / without) and the spread of the
tries. ``--part`` tries a needle's part other than its measured one in FORMS.
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
from tui.parsers.stall_evidence import PHASE_PATTERNS  # noqa: E402
from tui.sources.grep_filter import FORMS, grep_command, grep_needles  # noqa: E402

C_LOCALE = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}


def measured(kinds: set[str] | None) -> set[bytes]:
    """The needles of the phase kinds measured that no other needle set needs."""
    chosen = {n.encode() for kind, needles, _ in PHASE_PATTERNS if kinds is None or kind in kinds for n in needles}
    kept = {n.encode() for kind, needles, _ in PHASE_PATTERNS if kinds is not None and kind not in kinds
            for n in needles}
    return chosen - kept


def cpu_ratios(log: Path, tries: int, needles: set[bytes]) -> list[float]:
    """grep CPU with ``needles`` over grep CPU without them, one ratio per try."""
    with_phases = grep_command(grep_needles(NEEDLES), str(log))
    without = grep_command(grep_needles([n for n in NEEDLES if n not in needles]), str(log))
    timed(with_phases, C_LOCALE), timed(without, C_LOCALE)
    return [timed(with_phases, C_LOCALE)[1] / timed(without, C_LOCALE)[1] for _ in range(tries)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", type=Path, default=Path("/tmp/bench"))
    parser.add_argument("--size-mb", type=int, default=128)
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--kinds", help="comma-separated phase kinds (default: all)")
    parser.add_argument("--part", action="append", default=[], metavar="NEEDLE=PART")
    args = parser.parse_args()
    for pair in args.part:
        needle, _, part = pair.partition("=")
        FORMS[needle.encode()] = part.encode()
    needles = measured(set(args.kinds.split(",")) if args.kinds else None)
    print("grep looks for:", b", ".join(grep_needles(sorted(needles))).decode())
    args.logs.mkdir(parents=True, exist_ok=True)
    for name, log in logs(args.logs, args.size_mb):
        ratios = cpu_ratios(log, args.tries, needles)
        print(f"{name}: grep CPU with the phase needles {statistics.median(ratios):.2f}x "
              f"(tries {min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
