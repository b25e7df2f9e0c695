"""What starting every remote command through ``/bin/sh`` on stdin costs (``box_shell``).

Usage: python bench/box_shell_latency.py [--tries 15]

One short command (``echo hi``) over one open connection to a loopback sshd, on
its own and through a 10 MB/s + 20 ms link (bench/throttle_proxy.py): rlwatch's
``box_shell.run`` (the fixed ``exec /bin/sh -s``, the framed script on stdin, the
marker read past) against the baseline, asyncssh's plain ``run`` of the same
command line, in the same run, taken in turn. The script is pipelined behind
the exec request, so through the link the two should take the same number of
round trips; on loopback the difference is the box's extra ``/bin/sh``.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row  # noqa: E402
from bench.throttle_proxy import LINKS, loopback_boxes, run_on_loopback_boxes  # noqa: E402
from tui.sources.ssh import box_shell  # noqa: E402
from tui.sources.ssh.connection import connect  # noqa: E402
from tui.sources.ssh.target import RemoteTarget  # noqa: E402

COMMAND = "echo hi"


async def _pair(alias: str, tries: int) -> tuple[float, float]:
    """Median seconds of the baseline and of box_shell, alternating, over one connection."""
    connection = await connect(RemoteTarget(alias, "."))
    plain, framed = [], []
    try:
        for _ in range(tries):
            start = time.perf_counter()
            await connection.run(COMMAND, check=False)
            plain.append(time.perf_counter() - start)
            start = time.perf_counter()
            await box_shell.run(connection, COMMAND, alias)
            framed.append(time.perf_counter() - start)
    finally:
        connection.close()
        await connection.wait_closed()
    return statistics.median(plain), statistics.median(framed)


async def measure(tries: int) -> list[Row]:
    rows = []
    async with loopback_boxes("rlw-bench-shell-"):
        for alias, where in LINKS:
            plain, framed = await _pair(alias, tries)
            rows.append(Row(f"remote: one command through the login shell's /bin/sh, {where}",
                            f"{framed * 1000:.0f} ms = {framed / plain:.2f}×",
                            f"asyncssh's plain exec {plain * 1000:.0f} ms",
                            "≤ 1.1× through the link" if alias == "slowbox" else "(informative)",
                            framed / plain <= 1.1 or alias == "box"))
    return rows


def main() -> None:
    run_on_loopback_boxes(measure, __doc__)


if __name__ == "__main__":
    main()
