"""CPU while the dashboard follows an idle run: the process's CPU time over a quiet minute.

The real app runs headless on a loaded run whose log stops growing, with its
accelerator line fed every 2 s by ``nvidia-smi -l 2`` (a replay of a real
H100's output on PATH: its own CPU is not rlwatch's and is not counted). The
figure is CPU seconds used per wall second (1.0 = one core). Baseline: a bare
asyncio loop sleeping for the same time in the same process.

``follow_rows`` (``python bench/idle_cpu.py --follow [STEPS]``): the app on a
run of STEPS step lines (bench/make_log.py's ``run_lines``, 28 keys each)
while another process appends 20 more a second, as a busy trainer logs. The
figure is the app process's own CPU-seconds (every thread of it; not the
writer's) over the window, several windows each in a fresh app; the
baseline is the same app on the same run with nothing appended.
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


_WRITER = r"""
import itertools, sys, time
sys.path.insert(0, {repo!r})
from bench.make_log import run_lines
log, first, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
with open(log, "ab", buffering=0) as out:
    start = time.monotonic()
    for count, line in enumerate(run_lines(first), 1):
        out.write(line)
        time.sleep(max(0.0, start + count / rate - time.monotonic()))
"""


async def follow_share(steps: int, rate: float, seconds: float) -> tuple[float, int]:
    """The app's CPU per wall second over ``seconds`` while a writer appends ``rate`` step lines
    a second to a run of ``steps`` (0: none appended), and the steps that came meanwhile."""
    import itertools
    import subprocess

    from bench.make_log import run_lines
    from tui.session.run_session import RunSession
    from tui.sources.local_file import LocalFile
    from tui.ui.app import RlwatchApp

    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "run.log"
        with open(log, "wb") as out:
            out.writelines(itertools.islice(run_lines(), steps))
        app = RlwatchApp([RunSession(LocalFile(log))])
        async with app.run_test(size=(120, 40)) as pilot:
            while app.model.step_count < steps or not app.up_to_date:
                await pilot.pause(0.2)
            await pilot.pause(2.0)  # drawn, judged, its screens composed ahead
            writer = None
            if rate:
                repo = str(Path(__file__).resolve().parents[1])
                writer = subprocess.Popen([sys.executable, "-c", _WRITER.format(repo=repo), str(log),
                                           str(steps + 1), str(rate)])
                await asyncio.sleep(2.0)  # appending steadily
            try:
                first = app.model.step_count
                cpu, wall = time.process_time(), time.monotonic()
                await asyncio.sleep(seconds)
                share = (time.process_time() - cpu) / (time.monotonic() - wall)
                return share, app.model.step_count - first
            finally:
                if writer is not None:
                    writer.kill()
                    writer.wait()


def follow_rows(steps: int = 100_000, rate: float = 20.0, seconds: float = 20.0,
                repeats: int = 3) -> list[Row]:
    """CPU following a log that grows by ``rate`` step lines a second, ``repeats`` windows."""
    shares, idle = [], []
    for _ in range(repeats):
        shares.append(asyncio.run(follow_share(steps, rate, seconds)))
        idle.append(asyncio.run(follow_share(steps, 0.0, seconds))[0])
    low, high = min(s for s, _ in shares), max(s for s, _ in shares)
    came = sum(n for _, n in shares) / len(shares) / seconds
    return [Row(f"CPU following a {steps:,}-step run (28 keys a step) growing by {rate:.0f} step lines a "
                f"second, the app's own CPU-seconds per second, {repeats} windows of {seconds:.0f} s",
                f"{low * 100:.1f}–{high * 100:.1f}% of a core ({came:.1f} steps/s came in)",
                f"not growing: {min(idle) * 100:.1f}–{max(idle) * 100:.1f}%", "≤ 10% of a core",
                high <= 0.10)]


def rows(seconds: float = 60.0) -> list[Row]:
    ours = asyncio.run(idle_share(seconds))
    bare = asyncio.run(bare_share(seconds / 6))
    return [Row(f"CPU following an idle run, accelerator readings every 2 s ({seconds:.0f} s)",
                f"{ours * 100:.2f}% of a core", f"sleeping loop {bare * 100:.2f}%", "≤ 2% of a core",
                ours <= 0.02)]


if __name__ == "__main__":
    from bench.table import print_table

    if "--follow" in sys.argv:
        at = sys.argv.index("--follow")
        print_table(follow_rows(int(sys.argv[at + 1]) if len(sys.argv) > at + 1 else 100_000),
                    "see run_all.py")
    else:
        print_table(rows(), "see run_all.py")
