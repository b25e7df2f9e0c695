"""Build a large, realistic verl log for benchmarks from a real corpus run.

The step lines of a whole real run (corpus 032, 1,120 steps) interleaved with
reward-function chatter, as verbose reward functions print it: every sample's
extracted answer, ground truth and score. The chatter is sized so the file
reaches the requested size, keeping the real run's proportion of metric lines
to noise at the level users report (a fraction of a percent).

``--steps N`` builds the other extreme instead: a run of N steps and nothing
else (a long run whose log is all step lines, the model's worst case for
memory), each line 28 of the real run's keys with its values at full
precision, as newer verl prints them (``build_steps``).
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
from collections.abc import Iterator
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


# The 28 keys of a ``--steps`` line: the real run's actor, critic, length and timing keys.
STEP_KEYS = (
    "actor/kl_loss", "actor/kl_coef", "actor/entropy_loss", "actor/pg_loss", "actor/pg_clipfrac",
    "actor/ppo_kl", "actor/grad_norm", "actor/lr", "critic/score/mean", "critic/score/max",
    "critic/score/min", "critic/rewards/mean", "critic/advantages/mean", "critic/advantages/max",
    "critic/advantages/min", "critic/returns/mean", "response_length/mean", "response_length/max",
    "response_length/min", "response_length/clip_ratio", "prompt_length/mean", "timing_s/gen",
    "timing_s/old_log_prob", "timing_s/ref", "timing_s/update_actor", "timing_s/step",
    "total_num_tokens", "Tokens/Sec/GPU",
)


def run_lines(first: int = 1, seed: int = 0) -> Iterator[bytes]:
    """Step lines from step ``first`` on, without end: the real run's lines taken in turn
    (its training lines again and again) with their ``STEP_KEYS`` values jittered by a
    thousandth and printed at full precision."""
    rng = random.Random(seed)
    real = []
    for line in step_lines():
        items = dict(item.rsplit(":", 1) for item in line.decode().rstrip().split(" - ")[1:])
        if all(key in items for key in STEP_KEYS):  # not the validation-only lines
            real.append([float(items[key]) for key in STEP_KEYS])
    for step in itertools.count(first):
        values = real[(step - 1) % len(real)]
        items = " - ".join(f"{key}:{value * (1 + rng.gauss(0, 1e-3))!r}"
                           for key, value in zip(STEP_KEYS, values))
        yield f"step:{step} - {items}\n".encode()


def build_steps(path: Path, steps: int, seed: int = 0) -> int:
    """Write ``path``: steps 1..``steps`` of ``run_lines``; return the file's size."""
    with open(path, "wb") as out:
        out.writelines(itertools.islice(run_lines(1, seed), steps))
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", type=Path)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--steps", type=int, help="a log of this many step lines and nothing else")
    args = parser.parse_args()
    if args.steps:
        size = build_steps(args.path, args.steps)
        print(f"wrote {args.path} ({size / 2**20:.0f} MiB, {args.steps} step lines × {len(STEP_KEYS)} keys)")
        return
    count = build(args.path, args.size_mb * 1024 * 1024)
    print(f"wrote {args.path} ({args.path.stat().st_size / 2**20:.0f} MiB, {count} step lines)")


if __name__ == "__main__":
    main()
