"""A fleet's cost: 20 runs on 5 hosts against one run, opening time, memory and idle CPU.

    python bench/fleet.py [--pairs 3] [--idle 30] [--client-cpus 0,1 --box-cpus 2-15]
                          [--against CHECKOUT]

Five loopback sshd instances stand for five boxes (each its own port, host key
and ssh_config alias, a replayed H100 ``nvidia-smi`` on its PATH, so each
host's accelerators are read as on a real box); each holds four runs, a copy
of corpus 032's whole real GRPO log (1,120 steps). Every measurement runs in a
fresh interpreter through the real app, headless:

* ``one``: the dashboard on one of those runs (``rlwatch box1:/runs/r0``);
* ``fleet``: the fleet screen on all 20 (``rlwatch box1:/runs/* … box5:/runs/*``).

Each reports the seconds from start to what the user waits for: every step of every
run in its model, and the screen showing that, judged on all of it (every row drawn
from its run and judged, or the dashboard drawn and judged: the apps' ``up_to_date``),
beside the seconds to the steps alone (``loaded``),
its own CPU time until then (the boxes' sshd and grep are other processes; the
fleet's parse workers and their fork server are rlwatch's, and counted), its
resident memory above the same interpreter with rlwatch imported (the
baseline: what no run costs; the workers' included), and the CPU it uses over
a quiet window once loaded (the logs stop growing; the accelerator readings go
on). The two are
measured in alternating pairs, and the ratios are taken pair by pair.

On one machine the boxes' sshd sessions, shells and greps share the cores with
rlwatch, as they never do on a real fleet. ``--client-cpus`` pins rlwatch to
some cores and ``--box-cpus`` the five sshds (and all they start) to others:
on a machine of many cores, the "boxes elsewhere" figure. ``--against`` also
measures another checkout's rlwatch (a worktree of the commit before, say) in
the same pairs, one after the other, for a before/after of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row, print_table  # noqa: E402
from tests.corpus import verl_log  # noqa: E402
from tests.sources.accelerators.conftest import H100_REAL  # noqa: E402
from tests.sources.accelerators.replay import install  # noqa: E402
from tests.sshd import ClientHome, Sshd  # noqa: E402

HOSTS, RUNS_PER_HOST = 5, 4
REPO = Path(__file__).resolve().parents[1]
STEPS = 1120  # corpus 032's steps
# Seconds between the opening and the idle window. The fleet judges its runs within 0.1 s
# a redraw (once a second), so twenty fresh backfills are judged over several seconds
# after the last step is in; on a fast machine 5 s did not cover it, and the end of the
# opening's judging was counted as idle.
SETTLE_S = 10.0
# Seconds after which a measurement gives up and says which rows are not in (a box whose sshd
# does not answer would otherwise hold the bench until its subprocess timeout).
GIVE_UP_S = 90

_CHILD = r"""
import asyncio, json, os, sys, time
sys.path.insert(0, {repo!r})
from tui.cli.fleet import RunOptions, fleet_runs, runs_of
from tui.cli.targets import open_target
from tui.rules.rule_file import load_rules
from tui.session.run_session import RunSession
from tui.sources.ssh.pool import ConnectionPool
from tui.ui.app import RlwatchApp
from tui.ui.fleet_app import FleetApp

def tree():
    # This process and every live one below it (the fleet's parse workers), found by their
    # parents in /proc/*/stat (gVisor, under which some servers run it, has no /proc/PID/task/*/children).
    parents = {{}}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{{entry}}/stat").read()
            except OSError:
                continue
            parents.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += parents.get(pid, [])
    return found

def rss_mb():
    # Resident memory of the process tree (a worker's pages shared with the fork server
    # count twice: an upper bound).
    total = 0
    for pid in tree():
        for line in open(f"/proc/{{pid}}/status"):
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) / 1024
    return total

def cpu_s():
    # CPU seconds of the process tree: this one's and its live children's (user + system).
    children = sum(sum(map(int, open(f"/proc/{{pid}}/stat").read().rsplit(")", 1)[1].split()[11:13]))
                   for pid in tree()[1:])
    return time.process_time() + children / os.sysconf("SC_CLK_TCK")

async def main(mode, targets, idle_s, steps):
    base = rss_mb()
    start = time.perf_counter()
    pool = ConnectionPool()
    if mode == "one":
        session = RunSession(open_target(targets[0]).source)
        await session.connect()
        app, sessions = RlwatchApp([session]), lambda: [session]
    else:
        try:  # as ``rlwatch A B …`` does (tui.cli.fleet._fleet)
            from tui.session.parse_pool import ParsePool
            parse_pool = ParsePool()
            parse_pool.start()
            pooled = [parse_pool]
        except ImportError:  # a checkout from before the pool (--against)
            parse_pool, pooled = None, []
        try:  # the globs expanded on the screen, as rlwatch does since 2026-11-28
            from tui.cli.fleet import listed_runs
            found = listed_runs(targets)
        except ImportError:  # a checkout from before (--against)
            found = await runs_of(targets, pool)
        runs = fleet_runs(found, pool, RunOptions(None, load_rules()), *pooled)
        app = FleetApp(runs)
        sessions = lambda: [run.session for run in app.runs]  # a glob's row becomes its runs
    async with app.run_test(size=(120, 40)) as pilot:
        loaded = None
        # (A checkout from before ``up_to_date`` (--against) is timed to its steps alone.)
        while loaded is None or not getattr(app, "up_to_date", True):
            await pilot.pause(0.01)
            if loaded is None and all(s is not None and s.model.step_count == steps for s in sessions()):
                loaded = time.perf_counter() - start
            if time.perf_counter() - start > {give_up_s}:  # say why, rather than wait forever
                rows = app.runs if mode != "one" else []
                sys.exit(f"not every step in and shown after {give_up_s} s; rows: " + "; ".join(
                    f"{{run.name}}: {{run.reach}} {{run.problem}} "
                    f"{{run.session.model.step_count if run.session else None}}" for run in rows))
        opened, opening_cpu, own_cpu = time.perf_counter() - start, cpu_s(), time.process_time()
        wall = time.monotonic()
        await pilot.pause({settle_s})  # drawn, judged, the accelerators read
        settling = (cpu_s() - opening_cpu) / (time.monotonic() - wall)
        rss = rss_mb()
        cpu, wall = cpu_s(), time.monotonic()
        await asyncio.sleep(idle_s)
        idle = (cpu_s() - cpu) / (time.monotonic() - wall)
        shown = len(sessions())
    await pool.close()
    if mode != "one" and parse_pool is not None:
        parse_pool.close()
    print(json.dumps({{"open_s": opened, "loaded_s": loaded, "open_cpu_s": opening_cpu, "own_cpu_s": own_cpu, "rss_mb": rss - base,
                      "settling": settling, "idle": idle, "runs": shown,
                      "logins": pool.logins}}))

asyncio.run(main(sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])))
"""


def box_cpu_s(boxes: list[Sshd]) -> float:
    """CPU seconds the boxes have spent: each sshd listener's own and its reaped children's
    (a connection's session process, and through it every shell and grep it ran), which
    count once the connections close."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for box in boxes:
        assert box.process is not None
        fields = Path(f"/proc/{box.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return total / tick


def sessions(boxes: list[Sshd]) -> int:
    """The sessions (channels) the boxes have started: each an sshd session and a login shell."""
    return sum(len(box.sessions_started()) for box in boxes)


def cpu_list(text: str) -> set[int]:
    """The cores of a list as taskset writes it (``0,1``, ``2-15``)."""
    cores: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cores.update(range(int(first), int(last or first) + 1))
    return cores


def measure(home: ClientHome, mode: str, targets: list[str], idle_s: float,
            boxes: list[Sshd], repo: Path = REPO, client_cpus: set[int] | None = None) -> dict:
    """One measurement in a fresh interpreter running ``repo``'s rlwatch (on ``client_cpus``
    when given), with the boxes' CPU and sessions over it."""
    before, started = box_cpu_s(boxes), sessions(boxes)
    done = subprocess.run([sys.executable, "-c", _CHILD.format(repo=str(repo), settle_s=SETTLE_S,
                                                               give_up_s=GIVE_UP_S), mode,
                           json.dumps(targets), str(idle_s), str(STEPS)],
                          capture_output=True, text=True, env=home.env(), timeout=600,
                          preexec_fn=None if client_cpus is None
                          else lambda: os.sched_setaffinity(0, client_cpus))
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    deadline = time.monotonic() + 10
    while any(box.session_pids() for box in boxes) and time.monotonic() < deadline:
        time.sleep(0.05)  # the sessions end and are reaped: their CPU is counted then
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "box_cpu_s": box_cpu_s(boxes) - before,
            "sessions": sessions(boxes) - started}


def rows(pairs: int = 3, idle_s: float = 30.0, client_cpus: set[int] | None = None,
         box_cpus: set[int] | None = None, against: Path | None = None,
         local: bool = False) -> list[Row]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        home = ClientHome(root / "home")
        install(root / "bin", "nvidia-smi", H100_REAL)
        boxes, aliases = [], []
        for index in range(1, HOSTS + 1):
            box = Sshd(root / f"sshd{index}", [home.public_key],
                       env={"PATH": f"{root / 'bin'}:/usr/bin:/bin"}, log_sessions=True).start()
            if box_cpus is not None:
                assert box.process is not None
                os.sched_setaffinity(box.process.pid, box_cpus)  # its sessions inherit it
            boxes.append(box)
            aliases.append(f"box{index}")
            home.add_host(aliases[-1], box.port)
            home.trust(box.known_hosts_line())
            for run in range(RUNS_PER_HOST):
                (root / f"runs{index}" / f"r{run}").mkdir(parents=True)
                shutil.copy(verl_log("032"), root / f"runs{index}" / f"r{run}" / "train.log")
        fleet = [f"{alias}:{root}/runs{index}/*" for index, alias in enumerate(aliases, 1)]
        one = [f"box1:{root}/runs1/r0"]
        if local:  # the same runs from this machine's disk: rlwatch's own work alone
            fleet, one = [target.split(":", 1)[1] for target in fleet], [one[0].split(":", 1)[1]]
        try:
            results, others = [], []
            for _ in range(pairs):
                results.append((measure(home, "one", one, idle_s, boxes, client_cpus=client_cpus),
                                measure(home, "fleet", fleet, idle_s, boxes, client_cpus=client_cpus)))
                print("this checkout:", *results[-1], file=sys.stderr, flush=True)  # a cut-off run says
                if against is not None:
                    others.append((measure(home, "one", one, idle_s, boxes, against, client_cpus),
                                   measure(home, "fleet", fleet, idle_s, boxes, against, client_cpus)))
                    print(f"{against.name}:", *others[-1], file=sys.stderr, flush=True)
        finally:
            for box in boxes:
                box.stop()
    runs = HOSTS * RUNS_PER_HOST
    assert all(f["runs"] == runs and f["logins"] == (0 if local else HOSTS)
               for _, f in results + others), results
    table = figures(results, pairs, idle_s, local)
    if against is not None:
        table += comparison(results, others, against)
    return table


def figures(results: list[tuple[dict, dict]], pairs: int, idle_s: float, local: bool = False) -> list[Row]:
    """The table's rows from (one run, fleet) pairs of measurements."""
    runs = HOSTS * RUNS_PER_HOST
    open_ratio = statistics.median(f["open_s"] / o["open_s"] for o, f in results)
    memory_ratio = statistics.median((f["rss_mb"] / runs) / o["rss_mb"] for o, f in results)
    fleet_idle = statistics.median(f["idle"] for _, f in results)

    def medians(figure: str) -> tuple[float, float]:
        """The median of ``figure`` over the pairs: one run's, the fleet's."""
        return (statistics.median(o[figure] for o, _ in results),
                statistics.median(f[figure] for _, f in results))

    one_open, fleet_open = medians("open_s")
    one_rss, fleet_rss = medians("rss_mb")
    one_idle = medians("idle")[0]
    one_cpu, fleet_cpu = medians("open_cpu_s")
    one_box, fleet_box = medians("box_cpu_s")
    one_sessions, fleet_sessions = medians("sessions")
    each = f"{pairs} alternating pairs, median"
    where = "read from local disk" if local else f"on {HOSTS} loopback hosts"
    return [
        Row(f"fleet of {runs} runs {where}: start → every step of every run in the model and "
            f"every row drawn from it, judged on all of it (one run: its dashboard drawn and "
            f"judged) ({each})", f"{fleet_open:.2f} s = {open_ratio:.2f}× one run",
            f"one run {one_open:.2f} s", "≤ 2× one run", open_ratio <= 2.0),
        Row("… start → every step in the model, before it is shown", f"{medians('loaded_s')[1]:.2f} s",
            f"one run {medians('loaded_s')[0]:.2f} s", "(informative)", True),
        Row("… rlwatch's CPU from start to the rows shown, its parse workers included "
            "(the boxes' sshd and grep are other processes, on the same cores here)",
            f"{fleet_cpu:.2f} s = {fleet_cpu / runs:.3f} s a run", f"one run {one_cpu:.2f} s",
            "(informative)", True),
        Row("… of it in rlwatch's own process, the workers' left out (its event loop: what the "
            "opening waits on when the boxes are elsewhere and the workers keep up)",
            f"{medians('own_cpu_s')[1]:.2f} s", f"one run {medians('own_cpu_s')[0]:.2f} s",
            "(informative)", True),
        Row("… the boxes' CPU over the whole measurement (sshd, shells, grep, the replayed "
            "nvidia-smi; on this machine's cores too)", f"{fleet_box:.1f} s", f"one run {one_box:.1f} s",
            "(informative)", True),
        Row("… sessions the boxes started over it (each an sshd session and a login shell there: "
            "a glob's listing, a run's opening, the accelerator tools)", f"{fleet_sessions:.0f}",
            f"one run {one_sessions:.0f}", "(informative)", True),
        Row(f"… memory per run above the bare interpreter with rlwatch imported "
            f"({'no SSH login' if local else f'{HOSTS} SSH logins'})",
            f"{fleet_rss / runs:.1f} MB = {memory_ratio:.2f}× one run ({fleet_rss:.0f} MB in all)",
            f"one run {one_rss:.1f} MB", "≤ 2× one run's", memory_ratio <= 2.0),
        Row(f"… CPU over the {SETTLE_S:.0f} s after the opening (rows drawn, runs judged, the "
            "accelerators read), before the idle window", f"{medians('settling')[1] * 100:.1f}% of a core",
            f"one run {medians('settling')[0] * 100:.1f}%", "(informative)", True),
        Row(f"… CPU idle, {HOSTS} hosts' accelerators read every 2 s ({idle_s:.0f} s)",
            f"{fleet_idle * 100:.2f}% of a core", f"one run {one_idle * 100:.2f}%",
            "≤ 3% of a core", fleet_idle <= 0.03),
    ]


def comparison(results: list[tuple[dict, dict]], others: list[tuple[dict, dict]],
               against: Path) -> list[Row]:
    """This checkout's fleet against ``against``'s, measured in the same pairs: the time to
    every step in the model (a checkout from before ``up_to_date`` is timed to that alone),
    rlwatch's own CPU and its idle CPU, the ratios taken pair by pair."""
    rows = []
    for figure, label, unit, scale in (("loaded_s", "start → every step in the model", " s", 1),
                                       ("open_cpu_s", "rlwatch's own CPU to the opening's end", " s", 1), ("own_cpu_s", "the CPU of rlwatch's "
                                       "own process (its workers' left out)", " s", 1),
                                       ("settling", "CPU settling",
                                       "% of a core", 100), ("idle", "CPU idle", "% of a core", 100)):
        ratio = statistics.median(f[figure] / g[figure] for (_, f), (_, g) in zip(results, others))
        ones = statistics.median(o[figure] / p[figure] for (o, _), (p, _) in zip(results, others))
        rows.append(Row(f"… {label}, fleet against {against.name}'s rlwatch (one run: {ones:.2f}×)",
                        f"{statistics.median(f[figure] for _, f in results) * scale:.2f}{unit} = "
                        f"{ratio:.2f}×",
                        f"{statistics.median(g[figure] for _, g in others) * scale:.2f}{unit}",
                        "(informative)", True))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--client-cpus", type=cpu_list, help="pin rlwatch to these cores (0,1)")
    parser.add_argument("--box-cpus", type=cpu_list, help="pin the boxes' sshds to these (2-15)")
    parser.add_argument("--against", type=Path, help="another checkout to measure in the same pairs")
    parser.add_argument("--local", action="store_true",
                        help="the same 20 runs from this machine's disk (no SSH): rlwatch's own work")
    options = parser.parse_args()
    from bench.run_all import machine

    pinned = "" if options.client_cpus is None else f"; rlwatch on cores {sorted(options.client_cpus)}"
    boxed = "" if options.box_cpus is None else f", the boxes on {sorted(options.box_cpus)}"
    print_table(rows(options.pairs, options.idle, options.client_cpus, options.box_cpus,
                     options.against, options.local), machine() + pinned + boxed
                + ("; the runs read from local disk" if options.local else ""))
