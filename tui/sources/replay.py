"""A recorded log written out again as if a run were producing it, for ``rlwatch demo``.

The demo reads the replayed file through the ordinary LocalFile + Feed path,
so what it shows is what a real run shows. Like every source, this knows
nothing of verl: the caller says where each step ends (the parser finds
that) and the replay only paces bytes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

# Steps written at once before pacing starts, so the panels are never empty.
BURST_STEPS = 20


class Replay:
    """Appends ``data`` to ``path`` one step at a time, ``speed`` steps per second.

    ``step_ends`` are the offsets just past each step's line, ascending; a
    step's chunk is everything from the previous step's end to its own, so
    the chatter and sample dumps between step lines are replayed too.
    """

    def __init__(self, data: bytes, step_ends: Sequence[int], path: Path, speed: float,
                 burst: int = BURST_STEPS) -> None:
        if not speed > 0:  # also catches nan
            raise ValueError("speed must be positive")
        self.data = data
        self.step_ends = list(step_ends)
        self.path = path
        self.speed = speed
        self.burst = burst
        self.written = 0

    def prime(self) -> None:
        """Create the file holding the first ``burst`` steps (before anyone opens it)."""
        first = self.step_ends[self.burst - 1] if len(self.step_ends) >= self.burst else len(self.data)
        with open(self.path, "wb") as out:
            out.write(self.data[:first])
        self.written = first

    async def run(self) -> None:
        """Write the remaining steps at the set pace, then whatever follows the last one."""
        pending = [end for end in self.step_ends if end > self.written] + [len(self.data)]
        started = time.monotonic()
        with open(self.path, "ab") as out:
            for index, end in enumerate(pending, start=1):
                # Paced against the start, not the previous write, so the rate does not drift.
                await asyncio.sleep(max(0.0, started + index / self.speed - time.monotonic()))
                out.write(self.data[self.written:end])
                out.flush()
                self.written = end
