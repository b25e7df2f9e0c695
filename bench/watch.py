"""The headless watcher's cost against the fleet screen's, on the same 20 runs: memory, idle CPU,
and how soon a crash reaches a webhook.

    python bench/watch.py [--pairs 3] [--idle 30] [--local]

Twenty runs on five hosts, four each: five real sshd on 127.0.0.1 (tests/sshd.py),
each its own port and host key, named ``host0`` … ``host4`` in a client home's
ssh config, as ``bench/fleet.py`` has them; each run a copy of corpus 032's real
GRPO log up to its step 1,000 (a run still going: a crash after a run's end is
not one), watched as ``hostN:FOLDER/*.log``. ``--local`` reads the same runs
from local disk instead (rlwatch's own work alone, without SSH's). Each
measurement runs in a fresh interpreter:

* ``fleet``: the fleet screen on the 20 runs (Textual, headless), as ``rlwatch A B …``;
* ``watch``: the headless watcher on the same runs, as ``rlwatch watch … --headless
  --notify json://…``, a webhook on 127.0.0.1 receiving its messages.

Each is timed until every step of every run is in and judged, left to settle,
then measured: resident memory of its process tree (the parse workers
included) above the same interpreter with rlwatch imported, held (after
settling) and peak (the larger of the tree's resident memory sampled every
0.25 s until then, which counts workers that have ended since, and each live
process's high-water mark, summed), and CPU-seconds
of the whole tree per wall second over a quiet window (the logs stop
growing). The watcher then has a real crash block appended to one run's log,
and the seconds from that write to the message arriving at the webhook are
its notification latency (every one is to be within 5 s, and the message is to
name the exception line and failing rank). The two are measured in alternating pairs; ratios
are taken pair by pair, and each figure is given as the median and range of
the pairs.
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
from tests.sshd import ClientHome, Sshd  # noqa: E402

HOSTS, RUNS_PER_HOST = 5, 4
STEPS = 999  # the steps of corpus 032 before its step 1,000
SETTLE_S = 10.0
GIVE_UP_S = 120.0
# A real crash block (a 2-process run whose rank 1 raised), appended to one run's log.
CRASH = REPO / "tests" / "fixtures" / "logs" / "generated" / "ddp" / "gloo_rank1_raise.log"
CRASH_NAMED = "crashed: RuntimeError: reward worker returned a malformed batch at step 5 (rank 1 on localhost)"


def _tree() -> list[int]:
    """This process and every live one below it (the parse workers)."""
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children_of(pid)
    return found


def _rss_mb(field: str = "VmRSS") -> float:
    """The tree's resident memory now (``VmHWM``: each process's peak, summed)."""
    total = 0.0
    for pid in _tree():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith(f"{field}:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            continue
    return total


class _Peak:
    """The tree's resident memory at its largest: sampled every SAMPLE_S from now until
    ``most`` is asked (a parse worker that has ended leaves no high-water mark to read then),
    or each live process's own high-water mark summed, whichever is larger."""

    SAMPLE_S = 0.25

    def __init__(self) -> None:
        self._sampled = 0.0
        self._task = asyncio.get_running_loop().create_task(self._sample())

    async def _sample(self) -> None:
        while True:
            self._sampled = max(self._sampled, _rss_mb())
            await asyncio.sleep(self.SAMPLE_S)

    def most(self) -> float:
        self._task.cancel()
        return max(self._sampled, _rss_mb("VmHWM"))


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
        self.messages: list[str] = []
        arrived, messages = self.arrived, self.messages

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                messages.append(json.loads(body).get("message", ""))
                arrived.append(time.monotonic())
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"json://127.0.0.1:{self.server.server_port}/hook"


async def _measure(mode: str, words: list[str], folder: Path, idle_s: float) -> dict:
    from tui.cli.fleet import RunOptions, fleet_runs, listed_runs
    from tui.rules.rule_file import load_rules
    from tui.session.parse_pool import ParsePool
    from tui.sources.ssh.pool import ConnectionPool

    base = _rss_mb()
    peak = _Peak()
    start = time.perf_counter()
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
            result["rss_mb"], result["peak_mb"] = _rss_mb() - base, peak.most() - base
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
            watcher = Watcher(WatchState(Path(state)), tell, parse_pool=parse_pool)
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
            result["rss_mb"], result["peak_mb"] = _rss_mb() - base, peak.most() - base
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
            # The notice names what failed and where, as the log says it (not a bare "crashed").
            result["named"] = len(hook.arrived) > sent_before and CRASH_NAMED in hook.messages[-1]
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


def measure(mode: str, words: list[str], folder: Path, idle_s: float, env: dict[str, str]) -> dict:
    """One measurement in a fresh interpreter, on fresh copies of the runs."""
    _folder(folder)
    done = subprocess.run([sys.executable, __file__, "--child", mode, json.dumps(words), str(folder), str(idle_s)],
                          capture_output=True, text=True, timeout=GIVE_UP_S + SETTLE_S + idle_s + 120,
                          env={**env, "XDG_CONFIG_HOME": str(folder), "XDG_CACHE_HOME": str(folder)})
    if done.returncode != 0:
        sys.exit(f"{mode}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def spread(values: list[float], form: str, unit: str = "") -> str:
    """The median and range of the pairs' values: ``1.2 s (1.0–1.5)``."""
    return f"{form.format(statistics.median(values))}{unit} ({form.format(min(values))}–{form.format(max(values))})"


def rows(pairs: int, idle_s: float, local: bool) -> list[Row]:
    with tempfile.TemporaryDirectory() as root:
        folder, home, boxes = Path(root) / "runs", ClientHome(Path(root) / "home"), []
        try:
            for h in range(HOSTS):
                boxes.append(Sshd(Path(root) / f"sshd{h}", [home.public_key]).start())
                home.add_host(f"host{h}", boxes[-1].port)
                home.trust(boxes[-1].known_hosts_line())
            words = [("" if local else f"host{h}:") + str(folder / f"host{h}" / "*.log") for h in range(HOSTS)]
            results = []
            for _ in range(pairs):
                results.append((measure("fleet", words, folder, idle_s, home.env()),
                                measure("watch", words, folder, idle_s, home.env())))
                print(*results[-1], file=sys.stderr, flush=True)  # a cut-off run still says
        finally:
            for box in boxes:
                box.stop()
    watch_idle = [w["idle"] * 100 for _, w in results]
    fleet_idle = [f["idle"] * 100 for f, _ in results]
    held = [w["rss_mb"] / f["rss_mb"] for f, w in results]
    peak = [w["peak_mb"] / f["peak_mb"] for f, w in results]
    notified = [w["notified_s"] for _, w in results if w["notified_s"] is not None]
    every = len(notified) == len(results)
    named = sum(bool(w.get("named")) for _, w in results)
    return [
        Row(f"headless watcher, {HOSTS * RUNS_PER_HOST} runs on {HOSTS} hosts: CPU idle ({idle_s:.0f} s), "
            "its process tree", spread(watch_idle, "{:.2f}", "% of a core"),
            "fleet screen " + spread(fleet_idle, "{:.2f}", "%"), "≤ 2% of a core",
            statistics.median(watch_idle) <= 2.0),
        Row("… memory held, above a bare interpreter, against the fleet screen's",
            spread([w["rss_mb"] for _, w in results], "{:.0f}", " MB") + " = " + spread(held, "{:.2f}", "×"),
            "fleet screen " + spread([f["rss_mb"] for f, _ in results], "{:.0f}", " MB"), "≤ 1×",
            statistics.median(held) <= 1.0),
        Row("… memory at its peak (sampled every 0.25 s, ended workers included), against the fleet screen's",
            spread([w["peak_mb"] for _, w in results], "{:.0f}", " MB") + " = " + spread(peak, "{:.2f}", "×"),
            "fleet screen " + spread([f["peak_mb"] for f, _ in results], "{:.0f}", " MB"), "≤ 1×",
            statistics.median(peak) <= 1.0),
        Row("… a crash's last line written → its message at a webhook (min, median, max), the message naming "
            "the exception line and rank",
            (f"{min(notified):.2f} / {statistics.median(notified):.2f} / {max(notified):.2f} s, "
             f"named in {named} of {len(results)}") if every else f"never in {len(results) - len(notified)} pairs",
            "", "≤ 5 s", every and max(notified) <= 5.0 and named == len(results)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--local", action="store_true", help="read the runs from local disk, not over SSH")
    parser.add_argument("--child", nargs=4, metavar=("MODE", "WORDS", "FOLDER", "IDLE_S"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        mode, words, folder, idle_s = options.child
        print(json.dumps(asyncio.run(_measure(mode, json.loads(words), Path(folder), float(idle_s)))))
        return
    from bench.run_all import machine

    where = "the runs read from local disk" if options.local else \
        f"the runs read over SSH from {HOSTS} sshd on 127.0.0.1, sharing the cores"
    print_table(rows(options.pairs, options.idle, options.local), f"{machine()}; {where}")


if __name__ == "__main__":
    main()
