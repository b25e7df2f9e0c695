"""Where the run stands by its progress bars, shared by the kin grammars.

Several kin trainers print their metrics without a step number and let a tqdm
bar count the steps (TRL and ms-swift through the HF Trainer's bar, OpenRLHF's
``Episode [i/n]``, SkyRL's ``Training Batches Processed``). The grammars read
the step from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class RunPosition:
    """The last training-bar position seen and the highest step any kin grammar reported."""

    done: int | None = None
    total: int | None = None
    # Bumped on every new bar position, so a grammar can tell a stale bar from a fresh one.
    ticks: int = 0
    last_step: int | None = None

    def bar(self, done: int, total: int | None) -> None:
        if done != self.done or total != self.total:
            self.ticks += 1
        self.done, self.total = done, total

    def reported(self, step: int) -> None:
        if self.last_step is None or step > self.last_step:
            self.last_step = step
