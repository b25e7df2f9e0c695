"""CPU while the dashboard follows an idle run: the process's CPU time over a quiet minute.

The real app runs headless on a loaded run whose log stops growing, with its
accelerator line fed every 2 s by ``nvidia-smi -l 2`` (a replay of a real
H100's output on PATH: its own CPU is not rlwatch's and is not counted). The
figure is CPU seconds used per wall second (1.0 = one core). Baseline: a bare
asyncio loop sleeping for the same time in the same process.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row  # noqa: E402
from tests.corpus import verl_log  # noqa: E402

CORPUS_RUN = verl_log("032")


async def idle_share(seconds: float) -> float:
    from tui.session.run_session import RunSession
    from tui.sources.local_file import LocalFile
    from tui.ui.app import RlwatchApp

    import os

    from tests.sources.accelerators.conftest import H100_REAL
    from tests.sources.accelerators.replay import install, path_with

    with tempfile.TemporaryDirectory() as folder:
        install(Path(folder) / "bin", "nvidia-smi", H100_REAL)
        os.environ["PATH"] = path_with(Path(folder) / "bin")
        log = Path(folder) / "run.log"
        log.write_bytes(CORPUS_RUN.read_bytes())
        app = RlwatchApp([RunSession(LocalFile(log))])
        async with app.run_test(size=(120, 40)) as pilot:
            while not app.session.accelerators.devices():
                await pilot.pause(0.1)
            await pilot.pause(3.0)  # loaded, drawn and judged
            cpu, wall = time.process_time(), time.monotonic()
            await asyncio.sleep(seconds)
            return (time.process_time() - cpu) / (time.monotonic() - wall)


async def bare_share(seconds: float) -> float:
    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.sleep(seconds)
    return (time.process_time() - cpu) / (time.monotonic() - wall)


def rows(seconds: float = 60.0) -> list[Row]:
    ours = asyncio.run(idle_share(seconds))
    bare = asyncio.run(bare_share(seconds / 6))
    return [Row(f"CPU following an idle run, accelerator readings every 2 s ({seconds:.0f} s)",
                f"{ours * 100:.2f}% of a core", f"sleeping loop {bare * 100:.2f}%", "≤ 2% of a core",
                ours <= 0.02)]


if __name__ == "__main__":
    from bench.table import print_table

    print_table(rows(), "see run_all.py")
