"""Write the README's screenshots: the real app on a real run, driven by keys.

The first 40 steps of corpus run 032 followed by corpus log 018's CUDA OOM
traceback (a run that crashed after step 40), the clock pinned as in the
snapshot tests, in the default theme:

    python docs/make_screenshots.py

writes ``docs/screenshot.svg`` (the dashboard at 120×40), ``docs/screen-crash.svg``
(``w``: the traceback at its byte offset), ``docs/screen-step.svg`` (a step's
detail), ``docs/screen-80x24.svg`` (the dashboard at 80×24) and
``docs/screen-200x50.svg`` (the dashboard at 200×50: twelve panels, line charts); and
``docs/screen-compare.svg``: ``rlwatch compare`` on corpus runs 034, 035 and 030
at 120×40; and ``docs/screen-fleet.svg``: the fleet on a sweep of three runs (one
crashed, one warned, one running) at 120×12; and ``docs/screen-why.svg``: the why view
(``h``) on a real run hung saving its step-8 checkpoint, an hour on, at 100×30.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import dashboard_on  # noqa: E402
from tests.ui.screens.test_compare import connected, sessions, settled  # noqa: E402
from tests.ui.test_dashboard import wait_for  # noqa: E402
from tests.ui.test_snapshots import NOW, crashed_run, screen_svg, sweep_fleet_svg, why_stuck_svg  # noqa: E402
from tui.sources.local_file import LocalFile  # noqa: E402
from tui.ui.compare_app import CompareApp  # noqa: E402

SHOTS = {
    "screenshot.svg": ((120, 40), ()),
    "screen-80x24.svg": ((80, 24), ()),
    "screen-200x50.svg": ((200, 50), ()),
    "screen-crash.svg": ((120, 40), ("w",)),
    "screen-step.svg": ((120, 40), ("s", "j", "j", "enter")),
}


async def shoot(name: str, size: tuple[int, int], keys: tuple[str, ...]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        app = dashboard_on(LocalFile(crashed_run(Path(folder)), poll_seconds=0.05),
                           label="cola/grpo.log", name="cola", watch_accelerators=False)
        app.dashboard.header.clock = lambda: NOW  # before the first frame, as the snapshots do
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: app.model.last_step == 40 and any(
                f.rule == "crash" for f in app.findings) and not app.engine.behind, "judged", 30)
            for key in keys:
                await pilot.press(key)
                await pilot.pause(0.4)
            await pilot.pause(0.6)
            (ROOT / "docs" / name).write_text(screen_svg(app, ascii_only=False), encoding="utf-8")


async def shoot_compare() -> None:
    app = CompareApp(await connected(sessions()))
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot, app)
        (ROOT / "docs" / "screen-compare.svg").write_text(screen_svg(app, ascii_only=False), encoding="utf-8")


if __name__ == "__main__":
    for name, (size, keys) in SHOTS.items():
        asyncio.run(shoot(name, size, keys))
        print("wrote", name)
    asyncio.run(shoot_compare())
    print("wrote screen-compare.svg")
    with tempfile.TemporaryDirectory() as folder:
        svg = asyncio.run(sweep_fleet_svg(Path(folder), (120, 12)))
    (ROOT / "docs" / "screen-fleet.svg").write_text(svg, encoding="utf-8")
    print("wrote screen-fleet.svg")
    with tempfile.TemporaryDirectory() as folder:
        svg = asyncio.run(why_stuck_svg(Path(folder), (100, 30), ascii_only=False))
    (ROOT / "docs" / "screen-why.svg").write_text(svg, encoding="utf-8")
    print("wrote screen-why.svg")
