"""Local cold open: time until every step of a big log is in the model, against grep.

Baseline, measured in the same run on the same file: ``grep -c step: LOG``
(what a user would otherwise type). Both read the file from the page cache
(each is run once untimed first), so the figure is the parser's cost, not the
disk's. Prints one table row per size.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.make_log import build  # noqa: E402
from bench.table import Row  # noqa: E402
from tui.session.feed import Feed  # noqa: E402
from tui.model.run_model import RunModel  # noqa: E402
from tui.parsers.log_scanner import NEEDLES  # noqa: E402
from tui.sources.local_file import LocalFile  # noqa: E402


def time_grep(path: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["grep", "-c", "step:", str(path)], check=True, capture_output=True)
    return time.perf_counter() - start


def time_rlwatch(path: Path, prefilter: bool) -> tuple[float, int]:
    model = RunModel()
    source = LocalFile(path, prefilter=NEEDLES if prefilter else ())
    start = time.perf_counter()
    asyncio.run(Feed(source, model).run(follow=False))
    return time.perf_counter() - start, model.step_count


def rows(sizes_mb: tuple[int, ...] = (1024,)) -> list[Row]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes_mb:
            path = Path(tmp) / f"run_{size}.log"
            build(path, size * 1024 * 1024)
            time_grep(path)  # warm the page cache
            grep = min(time_grep(path) for _ in range(3))
            fast, steps = min(time_rlwatch(path, prefilter=True) for _ in range(2))
            slow, same = min(time_rlwatch(path, prefilter=False) for _ in range(2))
            assert steps == same == 1120, (steps, same)
            out.append(Row(f"local cold open of a {size} MiB log until all steps are in the model",
                           f"{fast:.2f} s = {fast / grep:.1f}× grep", f"`grep -c step:` {grep:.2f} s",
                           "≤ 3× grep", fast <= 3 * grep))
            out.append(Row("… the same without the grep prefilter (Python scan only)",
                           f"{slow:.2f} s = {slow / grep:.1f}× grep", f"`grep -c step:` {grep:.2f} s",
                           "(informative)", True))
            path.unlink()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, nargs="+", default=[256, 1024])
    from bench.table import print_table

    print_table(rows(tuple(parser.parse_args().size_mb)), "see run_all.py")
