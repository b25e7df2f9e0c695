"""What reading a stuck run's processes on its box costs: one round trip, whatever their number.

Usage: python bench/process_read.py [--tries 15]

``read_process_states`` of nine pids (``MAX_WATCHED``: a driver and an 8-GPU node's holders,
sleeping Python processes started here; the loopback box is this machine) over one open
connection to a loopback sshd, on its own and through a 10 MB/s + 20 ms link
(bench/throttle_proxy.py), against the baseline of the same run: one short command
(``echo hi``) through ``box_shell.run`` on the same connection, taken in turn. Through the link
the read should cost what one command does (one round trip); on loopback the difference is
the script's ``cat``/``tr`` processes on the box.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row  # noqa: E402
from bench.throttle_proxy import LINKS, loopback_boxes, run_on_loopback_boxes  # noqa: E402
from tui.model.processes import MAX_WATCHED  # noqa: E402
from tui.sources.accelerators.hosts import AcceleratorHost  # noqa: E402
from tui.sources.process_states import read_process_states  # noqa: E402
from tui.sources.ssh import box_shell  # noqa: E402
from tui.sources.ssh.connection import connect  # noqa: E402
from tui.sources.ssh.ssh_runner import SshRunner  # noqa: E402
from tui.sources.ssh.target import RemoteTarget  # noqa: E402


async def _pair(alias: str, pids: list[int], tries: int) -> tuple[float, float]:
    """Median seconds of the baseline command and of the read, alternating, over one connection."""
    connection = await connect(RemoteTarget(alias, "."))
    host = AcceleratorHost(SshRunner(lambda: connection, alias), alias, False)
    plain, read = [], []
    try:
        for _ in range(tries):
            start = time.perf_counter()
            await box_shell.run(connection, "echo hi", alias)
            plain.append(time.perf_counter() - start)
            start = time.perf_counter()
            answer = await read_process_states(host, pids)
            read.append(time.perf_counter() - start)
            assert all(answer.stats[pid] is not None for pid in pids)
    finally:
        connection.close()
        await connection.wait_closed()
    return statistics.median(plain), statistics.median(read)


async def measure(tries: int) -> list[Row]:
    sleepers = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
                for _ in range(MAX_WATCHED)]
    try:
        async with loopback_boxes("rlw-bench-procs-"):
            return [await _row(alias, where, [p.pid for p in sleepers], tries) for alias, where in LINKS]
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()


async def _row(alias: str, where: str, pids: list[int], tries: int) -> Row:
    """The read against one command through ``alias``."""
    plain, read = await _pair(alias, pids, tries)
    return Row(f"remote: {len(pids)} processes' /proc read, {where}",
               f"{read * 1000:.0f} ms = {read / plain:.2f}×", f"one command (echo hi) {plain * 1000:.0f} ms",
               "≤ 1.2× through the link (one round trip)" if alias == "slowbox" else "(informative)",
               read / plain <= 1.2 or alias == "box")


def main() -> None:
    run_on_loopback_boxes(measure, __doc__)


if __name__ == "__main__":
    main()
