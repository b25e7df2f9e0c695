"""What finding a stuck run's processes by who writes its log costs on its box, against reading
them by known pids: both one round trip; the scan also walks the account's open files.

Usage: python bench/log_writers_read.py [--tries 15]

A run piped into ``tee`` (a launcher and eight sleeping "ranks", started here; the loopback
box is this machine) is found by ``read_log_writers`` (the scan of every descriptor of the
account's processes and one reading of each of them) over one open connection to a loopback
sshd, on its own and through a 10 MB/s + 20 ms link (bench/throttle_proxy.py), against two
baselines of the same run taken in turn on the same connection: one short command (``echo
hi``) and ``read_process_states`` of the same nine pids, what a run whose log names its pid
costs. The account's other processes are scanned too, as on a real box: whatever runs on
the machine then, and ``OTHERS`` sleepers more (an account with a desktop session, an editor's
server and a few shells holds a couple of hundred); their number is printed.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row  # noqa: E402
from bench.throttle_proxy import LINKS, loopback_boxes, run_on_loopback_boxes  # noqa: E402
from tui.model.log_writers import writer_processes  # noqa: E402
from tui.model.processes import MAX_WATCHED  # noqa: E402
from tui.sources.accelerators.hosts import AcceleratorHost  # noqa: E402
from tui.sources.log_writers import read_log_writers  # noqa: E402
from tui.sources.process_states import read_process_states  # noqa: E402
from tui.sources.ssh import box_shell  # noqa: E402
from tui.sources.ssh.connection import connect  # noqa: E402
from tui.sources.ssh.ssh_runner import SshRunner  # noqa: E402
from tui.sources.ssh.target import RemoteTarget  # noqa: E402

# Eight ranks asleep under a launcher that prints into tee.
RUN = ("import subprocess, sys, time\n"
       "ranks = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']) for _ in range(8)]\n"
       "print('step:1 - train/loss:0.5', flush=True)\n"
       "time.sleep(600)\n")
# The account's processes besides the run, started for the measure.
OTHERS = 200


async def _times(alias: str, log: str, tries: int) -> tuple[float, float, float, int]:
    """Median seconds of ``echo hi``, of the pid read and of the scan, taken in turn over one
    connection; and how many processes the scan read."""
    connection = await connect(RemoteTarget(alias, "."))
    host = AcceleratorHost(SshRunner(lambda: connection, alias), alias, False)
    pids: list[int] = []
    scanned: list[int] = []

    async def scan() -> None:
        found, (answer,) = await read_log_writers(host, log, 0)
        pids[:] = [one.pid for one in writer_processes(found, answer.stats, alias, MAX_WATCHED)]
        assert len(pids) == MAX_WATCHED, pids
        scanned.append(len(answer.stats))

    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "echo": lambda: box_shell.run(connection, "echo hi", alias), "scan": scan,
        "pids": lambda: read_process_states(host, pids)}
    seconds: dict[str, list[float]] = {name: [] for name in calls}
    try:
        for _ in range(tries):
            for name, call in calls.items():
                start = time.perf_counter()
                await call()
                seconds[name].append(time.perf_counter() - start)
    finally:
        connection.close()
        await connection.wait_closed()
    echo, by_pid, by_scan = (statistics.median(seconds[name]) for name in ("echo", "pids", "scan"))
    return echo, by_pid, by_scan, scanned[-1]


async def measure(tries: int) -> list[Row]:
    folder = Path(tempfile.mkdtemp(prefix="rlw-bench-writers-"))
    log = folder / "grpo.log"
    run = subprocess.Popen(["sh", "-c", '"$0" -c "$1" 2>&1 | tee -- "$2"', sys.executable, RUN, str(log)],
                           start_new_session=True, stdout=subprocess.DEVNULL)
    others = [subprocess.Popen(["sleep", "600"]) for _ in range(OTHERS)]
    try:
        while not log.exists() or not log.read_text():
            time.sleep(0.05)
        async with loopback_boxes("rlw-bench-writers-"):
            rows = []
            for alias, where in LINKS:
                plain, by_pid, scan, read = await _times(alias, str(log), tries)
                rows.append(Row(f"remote: the log's writers found and read ({read} processes scanned), {where}",
                                f"{scan * 1000:.0f} ms = {scan / plain:.2f}× one command, "
                                f"{scan / by_pid:.2f}× the pid read",
                                f"echo hi {plain * 1000:.0f} ms; nine pids read {by_pid * 1000:.0f} ms",
                                "≤ 1.3× the pid read through the link (one round trip)" if alias == "slowbox"
                                else "(informative)", scan / by_pid <= 1.3 or alias == "box"))
            return rows
    finally:
        subprocess.run(["kill", "--", f"-{run.pid}"], check=False)
        run.wait()
        for other in others:
            other.kill()
            other.wait()


def main() -> None:
    run_on_loopback_boxes(measure, __doc__)


if __name__ == "__main__":
    main()
