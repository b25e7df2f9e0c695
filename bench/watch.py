"""The headless watcher's cost against the fleet screen's, on the same 20 runs: memory, idle CPU,
and how soon a crash reaches a webhook.

    python bench/watch.py [--pairs 2] [--idle 30]

Twenty runs in five folders (standing for five hosts; read locally, so what is
measured is rlwatch's own work, not SSH's), each a copy of corpus 032's real
GRPO log up to its step 1,000 (a run still going: a crash after a run's end is
not one). Each measurement runs in a fresh interpreter:

* ``fleet``: the fleet screen on the 20 runs (Textual, headless), as ``rlwatch A B …``;
* ``watch``: the headless watcher on the same runs, as ``rlwatch watch … --headless
  --notify json://…``, a webhook on 127.0.0.1 receiving its messages.

Each is timed until every step of every run is in and judged, left to settle,
then measured: resident memory of its process tree (the parse workers
included) above the same interpreter with rlwatch imported, and CPU per wall
second over a quiet window (the logs stop growing). The watcher then has a
real crash block appended to one run's log, and the seconds from that write
to the message arriving at the webhook are its notification latency. The
two are measured in alternating pairs; ratios are taken pair by pair.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row, print_table  # noqa: E402
from tests.cli.test_watch import children_of  # noqa: E402
from tests.corpus import REPO, verl_log  # noqa: E402

HOSTS, RUNS_PER_HOST = 5, 4
STEPS = 999  # the steps of corpus 032 before its step 1,000
SETTLE_S = 10.0
GIVE_UP_S = 120.0
# A real crash block (a 2-process run whose rank 1 raised), appended to one run's log.
CRASH = REPO / "tests" / "fixtures" / "logs" / "generated" / "ddp" / "gloo_rank1_raise.log"


def _tree() -> list[int]:
    """This process and every live one below it (the parse workers)."""
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children_of(pid)
    return found


def _rss_mb() -> float:
    total = 0.0
    for pid in _tree():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            continue
    return total


def _cpu_s() -> float:
    children = 0
    for pid in _tree()[1:]:
        try:
            children += sum(map(int, Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13]))
        except OSError:
            continue
    return time.process_time() + children / os.sysconf("SC_CLK_TCK")


class _Hook:
    """A webhook on 127.0.0.1 noting when each message arrived."""

    def __init__(self) -> None:
        self.arrived: list[float] = []
        arrived = self.arrived

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                arrived.append(time.monotonic())
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"json://127.0.0.1:{self.server.server_port}/hook"


async def _measure(mode: str, folder: Path, idle_s: float) -> dict:
    from tui.cli.fleet import RunOptions, fleet_runs, listed_runs
    from tui.rules.rule_file import load_rules
    from tui.session.parse_pool import ParsePool
    from tui.sources.ssh.pool import ConnectionPool

    base = _rss_mb()
    start = time.perf_counter()
    words = [str(folder / f"host{h}" / "*.log") for h in range(HOSTS)]
    pool, parse_pool = ConnectionPool(), ParsePool()
    parse_pool.start()
    runs = fleet_runs(listed_runs(words), pool, RunOptions(None, load_rules()), parse_pool)
    result: dict = {}
    if mode == "fleet":
        from tui.ui.fleet_app import FleetApp

        app = FleetApp(runs)
        async with app.run_test(size=(120, 40)) as pilot:
            while not (len(app.runs) == HOSTS * RUNS_PER_HOST and app.up_to_date and not app.loading
                       and all(r.session and r.session.model.step_count == STEPS for r in app.runs)):
                await pilot.pause(0.05)
                if time.perf_counter() - start > GIVE_UP_S:
                    sys.exit("the fleet did not load every run")
            result["opened_s"] = time.perf_counter() - start
            await pilot.pause(SETTLE_S)
            result["rss_mb"] = _rss_mb() - base
            cpu, wall = _cpu_s(), time.monotonic()
            await asyncio.sleep(idle_s)
            result["idle"] = (_cpu_s() - cpu) / (time.monotonic() - wall)
        await asyncio.gather(*(run.close() for run in app.runs))
    else:
        from tui.cli.notify import Notifier, channels
        from tui.cli.watch import Watcher
        from tui.cli.watch_state import WatchState

        hook = _Hook()
        notifier = Notifier(channels([hook.url]))
        told: list[tuple[float, str]] = []

        def tell(events: list) -> None:
            told.extend((time.monotonic(), event.kind) for event in events)
            notifier.add(events)

        with tempfile.TemporaryDirectory() as state:
            watcher = Watcher(WatchState(Path(state)), tell)
            for run in runs:
                watcher.add(run)
            judging = asyncio.get_running_loop().create_task(watcher.run())
            while not (len(watcher.runs) == HOSTS * RUNS_PER_HOST and watcher.read
                       and all(r.session and r.session.model.step_count == STEPS for r in watcher.runs)):
                await asyncio.sleep(0.05)
                if time.perf_counter() - start > GIVE_UP_S:
                    sys.exit("the watcher did not read every run")
            result["opened_s"] = time.perf_counter() - start
            result["told_before_crash"] = len(told)
            await asyncio.sleep(SETTLE_S)
            result["rss_mb"] = _rss_mb() - base
            cpu, wall = _cpu_s(), time.monotonic()
            await asyncio.sleep(idle_s)
            result["idle"] = (_cpu_s() - cpu) / (time.monotonic() - wall)
            crash = CRASH.read_bytes()
            crash = crash[crash.index(b"[rank1]: Traceback"):]
            sent_before = len(hook.arrived)
            with open(folder / "host2" / "r1.log", "ab") as out:
                out.write(crash)
            written = time.monotonic()
            while len(hook.arrived) == sent_before and time.monotonic() - written < 60:
                await asyncio.sleep(0.01)
            result["notified_s"] = hook.arrived[-1] - written if len(hook.arrived) > sent_before else None
            judging.cancel()
            await watcher.close()
            await notifier.close()
    await pool.close()
    parse_pool.close()
    return result


def _folder(root: Path) -> Path:
    run = verl_log("032").read_bytes()
    run = run[:run.index(b"\nstep:1000 ") + 1]
    for h in range(HOSTS):
        (root / f"host{h}").mkdir(parents=True, exist_ok=True)
        for r in range(RUNS_PER_HOST):
            (root / f"host{h}" / f"r{r}.log").write_bytes(run)
    return root


def measure(mode: str, idle_s: float) -> dict:
    """One measurement in a fresh interpreter, on fresh copies of the runs."""
    with tempfile.TemporaryDirectory() as folder:
        _folder(Path(folder))
        done = subprocess.run([sys.executable, __file__, "--child", mode, folder, str(idle_s)],
                              capture_output=True, text=True, timeout=GIVE_UP_S + SETTLE_S + idle_s + 120,
                              env={**os.environ, "XDG_CONFIG_HOME": folder, "XDG_CACHE_HOME": folder})
    if done.returncode != 0:
        sys.exit(f"{mode}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def rows(pairs: int, idle_s: float) -> list[Row]:
    results = [(measure("fleet", idle_s), measure("watch", idle_s)) for _ in range(pairs)]
    watch_idle = statistics.median(w["idle"] for _, w in results)
    fleet_idle = statistics.median(f["idle"] for f, _ in results)
    memory = statistics.median(w["rss_mb"] / f["rss_mb"] for f, w in results)
    notified = [w["notified_s"] for _, w in results if w["notified_s"] is not None]
    latency = statistics.median(notified) if len(notified) == len(results) else None
    return [
        Row(f"headless watcher, {HOSTS * RUNS_PER_HOST} runs: CPU idle ({idle_s:.0f} s)",
            f"{watch_idle * 100:.2f}% of a core", f"fleet screen {fleet_idle * 100:.2f}%",
            "≤ 2% of a core", watch_idle <= 0.02),
        Row("… memory above a bare interpreter, against the fleet screen's",
            f"{statistics.median(w['rss_mb'] for _, w in results):.0f} MB ({memory:.2f}×)",
            f"fleet screen {statistics.median(f['rss_mb'] for f, _ in results):.0f} MB", "≤ 1×", memory <= 1.0),
        Row("… a crash's last line written → its message at a webhook",
            "never" if latency is None else f"{latency:.2f} s", "", "≤ 5 s", latency is not None and latency <= 5.0),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--child", nargs=3, metavar=("MODE", "FOLDER", "IDLE_S"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        mode, folder, idle_s = options.child
        print(json.dumps(asyncio.run(_measure(mode, Path(folder), float(idle_s)))))
        return
    from bench.run_all import machine

    print_table(rows(options.pairs, options.idle), machine() + "; the runs read from local disk")


if __name__ == "__main__":
    main()
