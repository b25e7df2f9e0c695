"""The box's side of a remote backfill, on as many CPUs as the box has: the plan and its pieces
(the very shell command rlwatch sends over SSH, run here with ``sh -c``), pinned to 1, 2, 4 and 8
CPUs with ``taskset``, against ``grep -c step:`` over the same 1 GiB log in the same run: wall
seconds, and CPU seconds of the script's whole process tree (sh, dd, grep, tail).

No sshd is involved: this is what the training box spends, which bench/ssh_backfill.py cannot
show on a 2-CPU machine where the box, the sshd and the client share the same two CPUs.
"""

from __future__ import annotations

import argparse
import os
import statistics
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


def backfill(log: Path, cpus: int) -> tuple[float, float, int]:
    """Wall and CPU seconds (the script's whole process tree) for the backfill script on CPUs
    0..cpus-1 (``nproc`` there says ``cpus``, so it makes that many pieces) until it has sent
    every piece and the rest of the log, and the step lines it sent."""
    start = time.perf_counter()
    # A session of its own, as under sshd: the script's watcher ends its process group. The
    # login shell's place is taken by the script's own (exec), whose CPU then counts here.
    process = subprocess.Popen(["taskset", "-c", f"0-{cpus - 1}", "sh", "-c",
                                "exec " + remote_commands.backfill(str(log), NEEDLES)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    assert process.stdout is not None and process.stdin is not None
    out = b""
    # Then it follows (tail -F): closing its stdin ends it, as a closed channel does.
    while b"\nREST " not in out:
        out += process.stdout.read1(1 << 20)
    elapsed = time.perf_counter() - start
    process.stdin.close()
    _, _, usage = os.wait4(process.pid, 0)
    _clock, resume, cuts, body = out.split(b"\n", 3)
    resume_at = int(resume.split()[1])
    pieces = PiecesOutput([0, *map(int, cuts.split()[1:])])
    lines = sum(line.startswith(b"step:") for offset, line in pieces.feed(body) if offset < resume_at)
    assert pieces.ended
    return elapsed, usage.ru_utime + usage.ru_stime, lines


def grep_count(log: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``grep -c step: LOG``."""
    start = time.perf_counter()
    process = subprocess.Popen(["grep", "-c", "step:", str(log)], stdout=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.read()
    _, _, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--log", type=Path, help="a log built before (bench/make_log.py's or seed 001's "
                        "chatter, as bench/check_vs_grep.py --keep builds them) instead of a new make_log one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        log = args.log or Path(folder) / "grpo.log"
        if args.log is None:
            build(log, args.size_mb * 1024 * 1024)
        size_mb = log.stat().st_size >> 20
        grep_count(log)  # page cache warm
        rows = []
        for cpus in [n for n in (1, 2, 4, 8) if n <= (os.cpu_count() or 1)]:
            # In turn, so that a burst of load hits both; medians of five.
            runs = [(grep_count(log), backfill(log, cpus)) for _ in range(5)]
            assert all(lines == 1120 for _, (_, _, lines) in runs)
            base, base_cpu = (statistics.median(run[0][i] for run in runs) for i in (0, 1))
            ours, ours_cpu = (statistics.median(run[1][i] for run in runs) for i in (0, 1))
            rows.append(Row(f"box side of a remote backfill, {size_mb} MiB {log.name}, {cpus} CPU(s)",
                            f"{ours:.2f} s = {ours / base:.2f}× grep -c; {ours_cpu:.2f} CPU-s = "
                            f"{ours_cpu / base_cpu:.2f}×", f"`grep -c step:` {base:.2f} s, {base_cpu:.2f} CPU-s",
                            "(informative)", True))
    print_table(rows, f"{os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
