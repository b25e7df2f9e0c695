"""The box's side of a remote backfill, on as many CPUs as the box has: the plan and its pieces
(the very shell commands rlwatch sends over SSH, run here with ``sh -c``), pinned to 1, 2, 4 and 8
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
from tui.sources.grep_filter import GrepOutput, grep_piece  # noqa: E402
from tui.sources.ssh import remote_commands  # noqa: E402


def pinned(cpus: int, command: str, out) -> subprocess.Popen:
    """``command`` on CPUs 0..cpus-1, its output to ``out`` (a file: no pipe for us to drain)."""
    return subprocess.Popen(["taskset", "-c", f"0-{cpus - 1}", "sh", "-c", command], stdout=out)


def _plan_header(out) -> tuple[int, list[int]] | None:
    """RESUME and CUTS from the plan's output file, or None while they are not all written."""
    out.seek(0)
    lines = out.read(4096).split(b"\n")
    if len(lines) < 3 or lines[0][:7] != b"RESUME " or lines[1][:4] != b"CUTS":
        return None
    try:
        return int(lines[0].split()[1]), [int(cut) for cut in lines[1].split()[1:]]
    except ValueError:
        return None


def backfill(log: Path, cpus: int) -> tuple[float, int]:
    """Seconds for the plan and every piece on ``cpus`` CPUs, and the step lines found."""
    with tempfile.TemporaryDirectory() as folder:
        outs = [open(Path(folder) / f"{n}.out", "w+b") for n in range(9)]
        start = time.perf_counter()
        plan = pinned(cpus, remote_commands.plan(str(log), NEEDLES), outs[0])
        while (parsed := _plan_header(outs[0])) is None:  # RESUME and CUTS, then the last piece's lines
            time.sleep(0.001)
        resume, cuts = parsed
        pieces = [pinned(cpus, grep_piece(str(log), NEEDLES, begin, end), out)
                  for begin, end, out in zip([0, *cuts], cuts, outs[1:])]
        for process in [*pieces, plan]:
            process.wait()
        elapsed = time.perf_counter() - start
        lines = 0
        for out, base in [*zip(outs[1:], [0, *cuts]), (outs[0], cuts[-1] if cuts else 0)]:
            out.seek(0)
            data = out.read()
            if out is outs[0]:
                data = data.split(b"\n", 2)[2]
            lines += sum(line.startswith(b"step:") for o, line in GrepOutput(base).feed(data)
                         if o < resume)
        for out in outs:
            out.close()
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
