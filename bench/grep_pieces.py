"""The box's side of a remote backfill, on as many CPUs as the box has: the plan and its pieces
(the very shell command rlwatch sends over SSH, run here with ``sh -c``), pinned to 1, 2, 4 and 8
CPUs with ``taskset``, against ``grep -c step:`` over the same 1 GiB log in the same run.

No sshd is involved: this is what the training box spends, which bench/ssh_backfill.py cannot
show on a 2-CPU machine where the box, the sshd and the client share the same two CPUs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.make_log import build  # noqa: E402
from bench.table import Row, print_table  # noqa: E402
from tui.parsers.log_scanner import NEEDLES  # noqa: E402
from tui.sources.ssh import remote_commands  # noqa: E402
from tui.sources.ssh.remote_log import PiecesOutput  # noqa: E402


def backfill(log: Path, cpus: int) -> tuple[float, int]:
    """Seconds for the whole backfill script on CPUs 0..cpus-1 (``nproc`` there says ``cpus``,
    so it makes that many pieces), and the step lines it sent."""
    start = time.perf_counter()
    # A session of its own, as under sshd: the script's watcher ends its process group.
    process = subprocess.Popen(["taskset", "-c", f"0-{cpus - 1}", "sh", "-c",
                                remote_commands.backfill(str(log), NEEDLES)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    out = process.stdout.read()
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait()
    resume, cuts, body = out.split(b"\n", 2)
    resume_at = int(resume.split()[1])
    pieces = PiecesOutput([0, *map(int, cuts.split()[1:])])
    lines = sum(line.startswith(b"step:") for offset, line in pieces.feed(body) if offset < resume_at)
    assert pieces.ended
    return elapsed, lines


def grep_count(log: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["grep", "-c", "step:", str(log)], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=1024)
    size_mb = parser.parse_args().size_mb
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "grpo.log"
        build(log, size_mb * 1024 * 1024)
        grep_count(log)  # page cache warm
        rows = []
        for cpus in [n for n in (1, 2, 4, 8) if n <= (os.cpu_count() or 1)]:
            base = min(grep_count(log) for _ in range(3))
            ours, lines = min(backfill(log, cpus) for _ in range(3))
            assert lines == 1120, lines
            rows.append(Row(f"box side of a remote backfill, {size_mb} MiB log, {cpus} CPU(s)",
                            f"{ours:.2f} s = {ours / base:.2f}× grep -c", f"`grep -c step:` {base:.2f} s",
                            "(informative)", True))
    print_table(rows, f"{os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
