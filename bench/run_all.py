"""Run every benchmark and print the table the README carries.

    python bench/run_all.py [--quick] [--logs DIR]

Each figure sits next to a baseline measured in the same run. ``--quick``
uses a 256 MiB log and a shorter idle window (for a look, not for the README).
``--logs DIR`` keeps the two big workloads' logs there (bench/make_log.py's and
seed 001's chatter, ``make_<MiB>.log`` and ``chatter_<MiB>.log``), and the log of
step lines alone (``steps_<N>.log``), and reuses them.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import check_vs_grep, idle_cpu, local_open, memory, startup, ui_keys, ui_latency  # noqa: E402
from bench.table import Row, print_table  # noqa: E402


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count()} cores ({cpu}), {memory_gb:.0f} GiB, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--logs", type=Path, help="keep (and reuse) the big workloads' logs here")
    args = parser.parse_args()
    quick, size = args.quick, 256 if args.quick else 1024
    folder = args.logs or Path(tempfile.mkdtemp(prefix="rlwatch-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    rows += startup.rows()
    rows += check_vs_grep.rows(size, folder=folder)
    rows += local_open.rows((size,))
    rows += memory.rows()
    rows += memory.scale_rows(100_000 if quick else 1_000_000, folder=folder)
    rows += ui_latency.rows()
    rows += ui_keys.rows()
    rows += idle_cpu.rows(15.0 if quick else 60.0)
    rows += idle_cpu.follow_rows(repeats=1 if quick else 3)
    print_table(rows, machine())
    remote = Path(__file__).with_name("ssh_backfill.py")
    box = Path(__file__).with_name("grep_pieces.py")
    for workload, log in zip(("make", "chatter"), (folder / f"make_{size}.log", folder / f"chatter_{size}.log")):
        print(f"\nRemote, {workload} workload (bench/ssh_backfill.py):\n", flush=True)
        subprocess.run([sys.executable, str(remote), "--size-mb", str(size), "--workload", workload,
                        "--log", str(log)], check=False)
        print(f"\nThe box's side alone, {workload} workload (bench/grep_pieces.py):\n", flush=True)
        subprocess.run([sys.executable, str(box), "--log", str(log)], check=False)
    if args.logs is None:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
