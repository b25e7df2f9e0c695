"""Memory: peak RSS with a 100,000-step × 150-metric run loaded, and after a simulated day of following.

Each measurement runs in a fresh interpreter so one does not inherit the
other's heap. The baseline is the same interpreter after importing rlwatch's
model and parser, before any run data.

``scale_rows`` (``python bench/memory.py --scale [STEPS]``) reads a log of
nothing but step lines (bench/make_log.py ``--steps``: 1,000,000 lines of 28
keys, 1,020 MB) the two ways a user does: ``rlwatch check LOG --json`` as a whole
process (its peak RSS from the kernel's accounting, ``wait4``), and the
dashboard (the real app, headless) until every step is in, drawn and judged
(its peak and its RSS then, from /proc). The baseline is the values' own
size, 8 bytes each. Megabytes here are 10^6 bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
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


_DASHBOARD = r"""
import asyncio, sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from tui.heap import map_large_buffers
from tui.session.run_session import RunSession
from tui.sources.local_file import LocalFile
from tui.ui.app import RlwatchApp

def status():
    return {{line.split(":")[0]: int(line.split()[1]) * 1024 / 1e6 for line in open("/proc/self/status")
            if line.startswith("Vm")}}

async def main(log, steps):
    map_large_buffers()  # as ``rlwatch`` does first thing
    app = RlwatchApp([RunSession(LocalFile(Path(log)))])
    async with app.run_test(size=(120, 40)) as pilot:
        while app.model.step_count < steps or not app.up_to_date:
            await pilot.pause(0.2)
        await pilot.pause(1.0)
        now = status()
        print(json.dumps({{"peak": now["VmHWM"], "now": now["VmRSS"], "steps": app.model.step_count}}))

import json
asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def check_peak(log: Path) -> tuple[float, float, float]:
    """``rlwatch check LOG --json`` as a whole process: (peak RSS in MB, CPU s, wall s)."""
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "tui", "check", str(log), "--json"],
                               stdout=subprocess.DEVNULL, cwd=Path(__file__).resolve().parents[1])
    _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_maxrss * 1024 / 1e6, usage.ru_utime + usage.ru_stime, time.monotonic() - started


def dashboard_peak(log: Path, steps: int) -> dict:
    """The dashboard on ``log`` until its ``steps`` are in, drawn and judged: peak and RSS then."""
    repo = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", _DASHBOARD.format(repo=repo), str(log), str(steps)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def scale_rows(steps: int = 1_000_000, folder: Path | None = None) -> list[Row]:
    """Peak RSS of check and of the dashboard on a log of ``steps`` step lines × 28 keys."""
    from bench.make_log import STEP_KEYS, build_steps

    folder = folder or Path(tempfile.gettempdir())
    log = folder / f"steps_{steps}.log"
    if not log.exists():
        build_steps(log, steps)
    values = steps * len(STEP_KEYS) * 8 / 1e6  # MB, as the RSS figures (10^6 bytes)
    size = log.stat().st_size / 1e6
    peak, cpu, wall = check_peak(log)
    shown = dashboard_peak(log, steps)
    workload = f"{steps:,} steps × {len(STEP_KEYS)} keys, a {size:.0f} MB log of step lines alone"
    return [
        Row(f"peak RSS, `rlwatch check LOG --json`, {workload}",
            f"{peak:.0f} MB = {peak / values:.2f}× the values ({cpu:.1f} CPU-s, {wall:.1f} s)",
            f"the values {values:.0f} MB (8 bytes each)", "≤ 500 MB", peak <= 500),
        Row("peak RSS, the dashboard, same log, until every step is drawn and judged",
            f"{shown['peak']:.0f} MB = {shown['peak'] / values:.2f}× the values; {shown['now']:.0f} MB held then",
            f"the values {values:.0f} MB", "≤ 500 MB", shown["peak"] <= 500),
    ]


if __name__ == "__main__":
    from bench.table import print_table

    if "--scale" in sys.argv:
        at = sys.argv.index("--scale")
        count = int(sys.argv[at + 1]) if len(sys.argv) > at + 1 else 1_000_000
        print_table(scale_rows(count), "see run_all.py")
    else:
        print_table(rows(), "see run_all.py")
