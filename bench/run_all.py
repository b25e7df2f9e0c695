"""Run every benchmark and print the table the README carries.

    python bench/run_all.py [--quick]

Each figure sits next to a baseline measured in the same run. ``--quick``
uses a 256 MiB log and a shorter idle window (for a look, not for the README).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import idle_cpu, local_open, memory, startup, ui_keys, ui_latency  # noqa: E402
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
    quick = parser.parse_args().quick
    rows: list[Row] = []
    rows += startup.rows()
    rows += local_open.rows((256,) if quick else (1024,))
    rows += memory.rows()
    rows += ui_latency.rows()
    rows += ui_keys.rows()
    rows += idle_cpu.rows(15.0 if quick else 60.0)
    print_table(rows, machine())
    remote = Path(__file__).with_name("ssh_backfill.py")
    if remote.exists():
        print("\nRemote (bench/ssh_backfill.py):\n")
        subprocess.run([sys.executable, str(remote), *(["--size-mb", "256"] if quick else [])])


if __name__ == "__main__":
    main()
