"""Keypress to redrawn screen, with every dashboard panel showing 100,000 points.

The real app runs headless (Textual's pilot) on a model of 100,000 steps ×
150 metrics. Each sample presses a key that changes what is on screen (``?``
opens the help over the dashboard, ``escape`` closes it and the eight
sparkline panels are composed again) and waits until Textual has processed
it and refreshed, once the run is loaded and judged (the first judgement of a
100k-step backfill is spread over a few seconds of redraws, 30 ms each). The
pilot's own overhead is in both figures: the baseline is the same press on an
empty run.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.synthetic import fill_model  # noqa: E402
from bench.table import Row  # noqa: E402
from tui.model.aliases import DASHBOARD_CONCEPTS  # noqa: E402
from tui.sources.local_file import LocalFile  # noqa: E402
from tui.ui.app import RlwatchApp  # noqa: E402


async def press_times(steps: int, presses: int = 40) -> tuple[list[float], float]:
    """Per-press latencies (s), and the time of one full redraw after new data."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "idle.log"
        log.write_bytes(b"")
        app = RlwatchApp(LocalFile(log))
        if steps:
            fill_model(steps, model=app.model)
        async with app.run_test(size=(160, 48)) as pilot:
            app._dirty = True
            await pilot.pause(0.5)
            # Steady state: the backfill is drawn and judged (it is judged 30 ms per redraw).
            while app._drawing or app._dirty or app.engine.behind or not app.findings and steps:
                await pilot.pause(0.05)
            await pilot.pause(0.5)
            times = []
            for index in range(presses):
                key = "question_mark" if index % 2 == 0 else "escape"
                start = time.perf_counter()
                await pilot.press(key)
                await pilot.pause()
                times.append(time.perf_counter() - start)
            start = time.perf_counter()
            fill_model(1, seed=steps + 1, model=app.model)  # one more step: every panel redraws
            await app.dashboard.show_model()
            await pilot.pause()
            redraw = time.perf_counter() - start
    return times, redraw


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def rows(steps: int = 100_000) -> list[Row]:
    empty, _ = asyncio.run(press_times(0))
    full, redraw = asyncio.run(press_times(steps))
    panels = len(DASHBOARD_CONCEPTS)
    extra = p95(full) - p95(empty)
    return [
        Row(f"keypress (`?`/`escape`) → redrawn screen, {panels} panels × {steps:,} points, p95",
            f"{p95(full) * 1000:.0f} ms, of which the 100k points: {extra * 1000:+.0f} ms",
            f"same presses on an empty run {p95(empty) * 1000:.0f} ms", "≤ 50 ms",
            p95(full) <= 0.050),
        Row(f"new step → all {panels} panels redrawn, {steps:,} points each",
            f"{redraw * 1000:.0f} ms", "", "(informative)", True),
    ]


if __name__ == "__main__":
    from bench.table import print_table

    print_table(rows(), "see run_all.py")
