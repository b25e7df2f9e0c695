"""Side-by-side numbers of several runs: where each ended, its best, its mean.

"Which run is better" is asked of a handful of quantities, and only some of
them have a better direction: a higher reward or validation score, fewer
seconds per step. The others (loss, KL, entropy, lengths, grad norm) are
healthy inside a band, not at an extreme, so they get no "best": showing their
maximum as one would mislead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tui.model.aliases import STEP_TIME, TRAIN_REWARD, VALIDATION, Concept
from tui.model.series import Series

# +1: higher is better; -1: lower is better. Concepts not named have no better direction.
BETTER: dict[str, int] = {TRAIN_REWARD.id: 1, VALIDATION.id: 1, STEP_TIME.id: -1}


@dataclass(frozen=True, slots=True)
class RunNumbers:
    """One run's numbers for one metric (None: no finite value yet)."""

    last: float | None
    best: float | None
    mean: float | None
    points: int


def run_numbers(series: Series, concept: Concept) -> RunNumbers:
    """The last finite value, the best by the concept's direction (None where it has
    none), and the mean of the finite values: from the series' running summaries, so a
    100,000-step run costs no rescan at each redraw."""
    extent = series.finite_range()
    if extent is None:
        return RunNumbers(None, None, None, len(series))
    last = next(value for value in reversed(series.values) if math.isfinite(value))
    direction = BETTER.get(concept.id)
    best = None if direction is None else (extent[1] if direction > 0 else extent[0])
    return RunNumbers(last, best, series.finite_mean(), len(series))


def best_run(numbers: Sequence[RunNumbers | None], concept: Concept) -> int | None:
    """The index of the run with the best ``best`` value, where the concept has a
    direction and at least two runs have a value (one run beats nobody)."""
    direction = BETTER.get(concept.id)
    scored = [(n.best, index) for index, n in enumerate(numbers) if n is not None and n.best is not None]
    if direction is None or len(scored) < 2:
        return None
    return (max(scored) if direction > 0 else min(scored))[1]
