"""Build a large, realistic verl log for benchmarks from a real corpus run.

The step lines of a whole real run (corpus 032, 1,120 steps) interleaved with
reward-function chatter, as verbose reward functions print it: every sample's
extracted answer, ground truth and score. The chatter is sized so the file
reaches the requested size, keeping the real run's proportion of metric lines
to noise at the level users report (a fraction of a percent).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.corpus import verl_log  # noqa: E402

SOURCE = verl_log("032")

_CHATTER = (
    "(WorkerDict pid={pid}) [reward_fn] sample {idx}: extracted answer={ans!r} "
    "ground_truth={gt!r} format_ok={ok} score={score:.1f}\n"
)


def step_lines(source: Path = SOURCE) -> list[bytes]:
    """The run's step lines, in order."""
    return [line for line in source.read_bytes().splitlines(keepends=True) if line.startswith(b"step:")]


def build(path: Path, size: int, seed: int = 0) -> int:
    """Write ``path`` of about ``size`` bytes; return the number of step lines."""
    rng = random.Random(seed)
    steps = step_lines()
    per_step = max(0, size // len(steps) - sum(map(len, steps)) // len(steps))
    idx = 0
    with open(path, "wb") as out:
        for line in steps:
            written = 0
            block = []
            while written < per_step:
                idx += 1
                chatter = _CHATTER.format(pid=rng.randint(1000, 99999), idx=idx,
                                          ans=str(rng.randint(0, 500)), gt=str(rng.randint(0, 500)),
                                          ok=rng.random() > 0.1, score=rng.random()).encode()
                block.append(chatter)
                written += len(chatter)
            out.write(b"".join(block))
            out.write(line)
    return len(steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", type=Path)
    parser.add_argument("--size-mb", type=int, default=1024)
    args = parser.parse_args()
    count = build(args.path, args.size_mb * 1024 * 1024)
    print(f"wrote {args.path} ({args.path.stat().st_size / 2**20:.0f} MiB, {count} step lines)")


if __name__ == "__main__":
    main()
