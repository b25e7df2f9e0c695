"""Memory: peak RSS with a 100,000-step × 150-metric run loaded, and after a simulated day of following.

Each measurement runs in a fresh interpreter so one does not inherit the
other's heap. The baseline is the same interpreter after importing rlwatch's
model and parser, before any run data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.synthetic import data_bytes  # noqa: E402
from bench.table import Row  # noqa: E402

_CHILD = r"""
import json, random, sys, time
sys.path.insert(0, {repo!r})
from bench.synthetic import fill_model, step_line
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import load_rules

def rss_mb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024
base = rss_mb("VmRSS:")
mode, steps = sys.argv[1], int(sys.argv[2])
if mode == "loaded":
    model = fill_model(steps)
else:  # follow: step lines through the scanner, judged as the dashboard judges, one per "second"
    rng = random.Random(1)
    model, scanner, engine = RunModel(), LogScanner(), RuleEngine(load_rules())
    half = None
    for step in range(1, steps + 1):
        model.apply(scanner.feed(step_line(step, rng)), now=float(step))
        if step % 5 == 0:
            engine.evaluate(model, float(step))
        if step == steps // 2:
            half = rss_mb("VmRSS:")
print(json.dumps({{"base": base, "peak": rss_mb("VmHWM:"), "now": rss_mb("VmRSS:"),
                  "half": locals().get("half"), "steps": model.step_count}}))
"""


def measure(mode: str, steps: int) -> dict:
    repo = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", _CHILD.format(repo=repo), mode, str(steps)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def rows(steps: int = 100_000, day: int = 86_400) -> list[Row]:
    loaded = measure("loaded", steps)
    followed = measure("follow", day)
    data = data_bytes(day) / 2**20
    growth = followed["now"] - followed["base"]
    first, second = followed["half"] - followed["base"], followed["now"] - followed["half"]
    return [
        Row(f"peak RSS, {steps:,} steps × 150 metrics loaded", f"{loaded['peak']:.0f} MB",
            f"{data_bytes(steps) / 2**20:.0f} MB of data (8-byte step + float64 each)", "≤ 300 MB",
            loaded["peak"] <= 300),
        # Typed arrays over-allocate about 6% as they grow and the allocator keeps some slack,
        # so the series cost somewhat more than the bare numbers (the ratio is printed); what
        # must not happen is growth beyond the data: a leak would make the second half of the
        # day cost more than the first.
        Row(f"RSS growth after 24 h of following at 1 step/s ({day:,} steps, rules every 5 s)",
            f"{growth:.0f} MB = {growth / data:.2f}× the data; 2nd 12 h +{second:.0f} MB vs 1st +{first:.0f} MB",
            f"{data:.0f} MB of data", "no growth beyond the data: the 2nd half costs no more than the 1st",
            second <= first * 1.05),
    ]


if __name__ == "__main__":
    from bench.table import print_table

    print_table(rows(), "see run_all.py")
