"""Remote figures over a loopback sshd: ``rlwatch check host:LOG`` as a whole process, time
to a full dashboard, bytes over the wire, the same through a 10 MB/s + 20 ms link, follow
latency, and client CPU while idle.

Baseline, in the same run over the same connection setup: ``ssh host grep -c step: LOG``
(OpenSSH's own client, a whole process, its output read through a pipe). Beside each wall
time, the CPU seconds of the whole process tree on both ends: the client's (the ``rlwatch`` or
``ssh`` process and its children; this process for the dashboard's path) and the box's (the
sshd listener and all it starts: sessions, shells, grep, dd; counted by a cgroup, so where
one can be made: cgroup v1 as root, else not given), which on this 2-CPU machine share the
same two cores and so bound the wall time from below. The log is
bench/make_log.py's (``--workload make``) or seed 001's chatter (``--workload chatter``,
bench/chatter_log.py): a real run's 1,120 step lines in reward-function chatter.
``--log`` reuses a log built before (either workload's, as the bench made it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.make_log import build  # noqa: E402
from bench.table import Row, print_table  # noqa: E402
from bench.throttle_proxy import ThrottleProxy, box_and_slowbox  # noqa: E402
from tests.corpus import verl_log  # noqa: E402
from tests.sshd import ClientHome, Sshd  # noqa: E402
from tui.session.feed import Feed  # noqa: E402
from tui.model.run_model import RunModel  # noqa: E402
from tui.parsers.log_scanner import NEEDLES  # noqa: E402
from tui.sources.ssh.remote_log import RemoteLog  # noqa: E402
from tui.sources.ssh.target import RemoteTarget  # noqa: E402


TRIES = 9
# This checkout: ``python -m tui`` here runs its code.
HERE = Path(__file__).resolve().parents[1]


# The box of the run being measured, and the cgroup its sshd runs in (where one can be made).
BOX: list[Sshd] = []
GROUP: list[Path] = []
# cgroup v1's CPU accounting controller: a group counts the CPU of every process that started
# in it, including those the box's shells leave behind (reparented, so no sshd ever reaps them).
CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def account(server: Sshd) -> None:
    """Put ``server`` (and so every session and command it starts) in a CPU-accounting group
    of its own, where this machine lets us make one (cgroup v1, as root)."""
    assert server.process is not None
    group = CPUACCT / f"rlwatch-bench-{os.getpid()}"
    try:
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(server.process.pid))
    except OSError:
        return
    GROUP[:] = [group]


def release() -> None:
    """Remove the accounting group once the last process in it has ended (the box's leftovers
    end a moment after sshd: their watchers see the channel close)."""
    for group in GROUP:
        deadline = time.monotonic() + 10
        while (group / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.05)
        try:
            group.rmdir()
        except OSError as error:
            print(f"left {group} ({error.strerror})", file=sys.stderr)
    GROUP.clear()


def box_cpu() -> float:
    """CPU seconds the box has spent so far (NaN where it cannot be counted)."""
    return int((GROUP[0] / "cpuacct.usage").read_text()) / 1e9 if GROUP else float("nan")


def quiet_box() -> None:
    """Wait until the box's sessions have ended, so that one command's CPU is not the next's."""
    deadline = time.monotonic() + 5
    while BOX[0].session_pids() and time.monotonic() < deadline:
        time.sleep(0.005)


def whole_process(argv: list[str], **options) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (the process tree here and the box's) and output of ``argv``."""
    quiet_box()
    box = box_cpu()
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **options)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    quiet_box()
    return elapsed, usage.ru_utime + usage.ru_stime + box_cpu() - box, out


def ssh_grep(home: ClientHome, alias: str, log: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``ssh ALIAS grep -c step: LOG``."""
    elapsed, cpu, out = whole_process(["ssh", "-F", str(home.config), "-o",
                                       f"UserKnownHostsFile={home.known_hosts}", alias, f"grep -c step: {log}"])
    assert out.strip() == b"1120", out[-300:]
    return elapsed, cpu


def check_process(alias: str, log: Path, tree: Path = HERE) -> tuple[float, float]:
    """Wall and CPU seconds of ``rlwatch check ALIAS:LOG --json`` as a whole process (start-up
    included), of the code in ``tree`` (``python -m tui`` there)."""
    elapsed, cpu, out = whole_process([sys.executable, "-m", "tui", "check", f"{alias}:{log}", "--json"],
                                      cwd=tree)
    assert b'"steps": 1120' in out, out[-600:]
    return elapsed, cpu


def sessions_of_a_check(server: Sshd, log: Path, tree: Path = HERE) -> int:
    """The sessions (channels) the box starts for one ``check``: each is an sshd session and a
    login shell there, whose start-up files (conda, pyenv) a real box may take a second over."""
    before = len(server.sessions_started())
    check_process("box", log, tree)
    time.sleep(0.5)  # sshd writes its log as it goes
    return len(server.sessions_started()) - before


def against_rows(server: Sshd, log: Path, tree: Path, tries: int, workload: str) -> list[Row]:
    """This code's check against the code in ``tree`` (another checkout, ``git worktree add``
    or ``git archive``), in alternating pairs, with its sessions: on a shared machine a burst
    of load hits both alike, and their ratio says what a change bought where the ratio to
    grep moves with the load."""
    pairs = []
    for index in range(tries):
        sides = [HERE, tree] if index % 2 == 0 else [tree, HERE]
        times = {side: check_process("box", log, side) for side in sides}
        pairs.append((times[HERE], times[tree]))
    wall = [ours[0] / theirs[0] for ours, theirs in pairs]
    cpu = [ours[1] / theirs[1] for ours, theirs in pairs]
    return [Row(f"remote `check`, {workload} log: this code against {tree} ({tries} alternating pairs)",
                f"{statistics.median(wall):.2f}× wall ({min(wall):.2f}–{max(wall):.2f}), "
                f"{statistics.median(cpu):.2f}× CPU ({min(cpu):.2f}–{max(cpu):.2f}); sessions "
                f"{sessions_of_a_check(server, log)} against {sessions_of_a_check(server, log, tree)}",
                f"that code's check {statistics.median(theirs[0] for _, theirs in pairs):.2f} s",
                "(informative)", True)]


def paired(first, second, tries: int) -> tuple[float, float, list[float], float, float, list[float]]:
    """``first`` and ``second`` (each giving wall and CPU seconds) run in turn ``tries`` times:
    the median wall seconds of each and each pair's ratio, then the same for CPU seconds."""
    pairs = [(first(), second()) for _ in range(tries)]
    return (statistics.median(a[0] for a, _ in pairs), statistics.median(b[0] for _, b in pairs),
            [a[0] / b[0] for a, b in pairs],
            statistics.median(a[1] for a, _ in pairs), statistics.median(b[1] for _, b in pairs),
            [a[1] / b[1] for a, b in pairs])


async def load(alias: str, log: Path, proxy: ThrottleProxy | None = None) -> tuple[float, int, float]:
    """Seconds from start until the model holds every step, as the dashboard fills (it follows
    the log), the bytes the client received until then, and the CPU seconds spent until then
    here and on the box."""
    await asyncio.to_thread(quiet_box)
    box = await asyncio.to_thread(box_cpu)
    cpu = time.process_time()
    start = time.perf_counter()
    source = RemoteLog(RemoteTarget(alias, str(log)), NEEDLES)
    await source.connect()
    model = RunModel()
    full = asyncio.Event()
    task = asyncio.create_task(Feed(source, model, on_change=lambda: model.step_count == 1120 and full.set())
                               .run(follow=True))
    await asyncio.wait([task, asyncio.create_task(full.wait())], return_when=asyncio.FIRST_COMPLETED)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu + await asyncio.to_thread(box_cpu) - box
    received = proxy.bytes_to_client if proxy else 0
    assert model.step_count == 1120, model.step_count
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await source.close()
    return elapsed, received, cpu


async def follow_figures(alias: str, log: Path, samples: int = 40) -> tuple[float, float]:
    """p95 append→model latency, and CPU share while following an idle log for 20 s."""
    source = RemoteLog(RemoteTarget(alias, str(log)), NEEDLES)
    await source.connect()
    model = RunModel()
    task = asyncio.create_task(Feed(source, model).run(follow=True))
    while model.step_count < 1120:
        await asyncio.sleep(0.05)
    latencies = []
    with open(log, "a") as handle:
        for index in range(samples):
            step = 5000 + index
            start = time.perf_counter()
            handle.write(f"step:{step} - critic/score/mean:0.5 - actor/pg_loss:0.1\n")
            handle.flush()
            while model.last_step != step:
                await asyncio.sleep(0.002)
            latencies.append(time.perf_counter() - start)
            await asyncio.sleep(0.05)
    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.sleep(20)
    idle = (time.process_time() - cpu) / (time.monotonic() - wall)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await source.close()
    return statistics.quantiles(latencies, n=20)[-1], idle


CHATTER = Path(__file__).with_name("chatter_log.py")


def build_workload(log: Path, size_mb: int, workload: str) -> None:
    """bench/make_log.py's log, or the seed-001 chatter around the same real step lines."""
    if workload == "make":
        build(log, size_mb * 1024 * 1024)
        return
    subprocess.run([sys.executable, str(CHATTER), str(verl_log("032")), str(log), str(size_mb)], check=True,
                   stdout=subprocess.DEVNULL)


async def measure(size_mb: int, workload: str = "make", built: Path | None = None,
                  tries: int = TRIES, against: Path | None = None) -> list[Row]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        log = root / "grpo.log"
        if built is None:
            build_workload(log, size_mb, workload)
        else:  # a copy: the follow figures append to the log
            shutil.copyfile(built, log)
        size = log.stat().st_size
        home = ClientHome(root / "home")
        server = Sshd(root / "sshd", [home.public_key], log_sessions=True).start()
        BOX[:] = [server]
        account(server)
        proxy = await box_and_slowbox(home, server)
        try:
            ssh_grep(home, "box", log)  # page cache warm
            # Best of TRIES each, taken in turn, so a burst of load on this machine
            # hits both sides alike.
            base, ours, slow_base, slow, cpu_ratios = [], [], [], [], []
            for _ in range(tries):
                base.append(await asyncio.to_thread(ssh_grep, home, "box", log))
                loaded = await load("box", log)
                ours.append(loaded[0])
                cpu_ratios.append((loaded[2], loaded[2] / base[-1][1]))
                slow_base.append((await asyncio.to_thread(ssh_grep, home, "slowbox", log))[0])
                slow.append((await load("slowbox", log))[0])
            base_cpu = statistics.median(cpu for _, cpu in base)
            ours_cpu = statistics.median(cpu for cpu, _ in cpu_ratios)
            load_cpu_ratios = [ratio for _, ratio in cpu_ratios]
            base, ours, slow_base, slow = min(wall for wall, _ in base), min(ours), min(slow_base), min(slow)
            check, check_base, ratios, check_cpu, check_base_cpu, check_cpu_ratios = await asyncio.to_thread(
                paired, lambda: check_process("box", log), lambda: ssh_grep(home, "box", log), tries)
            sessions = await asyncio.to_thread(sessions_of_a_check, server, log)
            compared = (await asyncio.to_thread(against_rows, server, log, against, tries, workload)
                        if against is not None else [])
            proxy.bytes_to_client = 0
            _, received, _ = await load("slowbox", log, proxy)
            p95, idle = await follow_figures("box", log)
        finally:
            await proxy.stop()
            server.stop()
            release()
    ratio = statistics.median(ratios)
    return [
        Row(f"remote: `rlwatch check host:LOG --json`, whole process, {size_mb} MiB {workload} log",
            f"{check:.2f} s = {ratio:.2f}× ({min(ratios):.2f}–{max(ratios):.2f})",
            f"`ssh host grep -c step: LOG` {check_base:.2f} s", "≤ 1.5×", ratio <= 1.5),
        Row(f"remote: `rlwatch check host:LOG --json`, CPU seconds of both ends (client tree + box), "
            f"{size_mb} MiB {workload} log", f"{check_cpu:.2f} CPU-s = {statistics.median(check_cpu_ratios):.2f}× "
            f"({min(check_cpu_ratios):.2f}–{max(check_cpu_ratios):.2f})",
            f"`ssh host grep -c step: LOG` {check_base_cpu:.2f} CPU-s", "(informative)", True),
        Row("remote: sessions that `check` starts on the box (each a login shell there)", f"{sessions}",
            "`ssh host grep` 1", "(informative)", True),
        Row(f"remote: start → all steps loaded, {size_mb} MiB {workload} log, loopback sshd",
            f"{ours:.2f} s = {ours / base:.2f}× baseline", f"`ssh host grep -c step: log` {base:.2f} s",
            "≤ 1.5×", ours <= 1.5 * base),
        Row(f"remote: start → all steps loaded, CPU seconds of both ends (client + box), {size_mb} MiB "
            f"{workload} log", f"{ours_cpu:.2f} CPU-s = {statistics.median(load_cpu_ratios):.2f}× "
            f"({min(load_cpu_ratios):.2f}–{max(load_cpu_ratios):.2f})",
            f"`ssh host grep -c step: log` {base_cpu:.2f} CPU-s", "(informative)", True),
        Row("remote: bytes received during that backfill", f"{received / 1e6:.2f} MB = "
            f"{received / size:.2%} of the log", f"log {size / 1e6:.0f} MB", "≤ 1%", received <= 0.01 * size),
        Row("remote: the same through 10 MB/s + 20 ms", f"{slow:.2f} s = {slow / slow_base:.2f}× baseline",
            f"`ssh host grep -c` through the link {slow_base:.2f} s", "≤ 1.5×", slow <= 1.5 * slow_base),
        Row("remote: follow latency, line appended on the box → in the model, p95",
            f"{p95 * 1000:.0f} ms", "", "≤ 300 ms", p95 <= 0.300),
        Row("remote: client CPU following an idle run", f"{idle * 100:.2f}% of a core", "", "≤ 2%",
            idle <= 0.02),
        *compared,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--workload", choices=("make", "chatter"), default="make",
                        help="bench/make_log.py's log, or bench/chatter_log.py's (seed 001)")
    parser.add_argument("--log", type=Path, help="that workload's log, built before (copied: the bench appends)")
    parser.add_argument("--tries", type=int, default=TRIES,
                        help="rounds of each figure, each paired with its baseline (fewer on a shared machine)")
    parser.add_argument("--against", type=Path, help="another checkout whose check is timed against "
                        "this one's in alternating pairs (the code before a change)")
    args = parser.parse_args()
    rows = asyncio.run(measure(args.size_mb, args.workload, args.log, args.tries,
                               args.against.resolve() if args.against else None))
    print_table(rows, "loopback sshd on this machine")


if __name__ == "__main__":
    main()
