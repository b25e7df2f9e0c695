"""A metric's values over steps, stored compactly.

A week-long run can hold 100,000 steps × 150 metrics; two typed arrays per
metric keep that in a few hundred megabytes where a dict per step would not.
Steps almost always arrive in order, so appends are O(1); a re-printed step
(a validation line at a resumed step, steps re-done after a restart) is
found by bisection and overwritten: the later line wins.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left


class Series:
    """Values of one metric keyed by step, ascending."""

    __slots__ = ("steps", "values", "rewrites", "_range", "_drawn")

    def __init__(self) -> None:
        self.steps = array("q")
        self.values = array("d")
        # Bumped whenever a point other than a new last one changes, so a
        # reader that works incrementally (the rules) knows to start over.
        self.rewrites = 0
        # Kept up to date on append, so a redraw of a 100k-point panel does
        # not rescan the series: (min, max) of the finite values, or None.
        self._range: tuple[float, float] | None = None
        # The last downsample, keyed by (points, rewrites, buckets).
        self._drawn: tuple[tuple[int, int, int], list[float]] | None = None

    def __len__(self) -> int:
        return len(self.steps)

    def set(self, step: int, value: float) -> None:
        """Record ``value`` at ``step``, replacing an earlier value for that step."""
        steps = self.steps
        if not steps or step > steps[-1]:
            steps.append(step)
            self.values.append(value)
            if math.isfinite(value):
                low, high = self._range or (value, value)
                self._range = (min(low, value), max(high, value))
            return
        at = bisect_left(steps, step)
        self.rewrites += 1
        self._range = self._scan_range()
        if at < len(steps) and steps[at] == step:
            self.values[at] = value
        else:
            steps.insert(at, step)
            self.values.insert(at, value)

    def last(self) -> tuple[int, float] | None:
        """(step, value) of the newest point."""
        if not self.steps:
            return None
        return self.steps[-1], self.values[-1]

    def previous(self) -> tuple[int, float] | None:
        """(step, value) of the point before the newest one."""
        if len(self.steps) < 2:
            return None
        return self.steps[-2], self.values[-2]

    def value_at(self, step: int) -> float | None:
        """The value recorded at exactly ``step``, if any."""
        at = bisect_left(self.steps, step)
        if at < len(self.steps) and self.steps[at] == step:
            return self.values[at]
        return None

    def finite_range(self) -> tuple[float, float] | None:
        """(min, max) over the finite values."""
        return self._range

    def _scan_range(self) -> tuple[float, float] | None:
        finite = [v for v in self.values if math.isfinite(v)]
        return (min(finite), max(finite)) if finite else None

    def downsample(self, buckets: int) -> list[float]:
        """At most ``buckets`` values for drawing, keeping every spike.

        Each bucket contributes the value that strays furthest from the
        series' overall middle, so a one-step spike up *or* down survives
        any amount of shrinking (TensorBoard's random sampling loses them).
        Non-finite values are left out: the rules report those.
        """
        key = (len(self.values), self.rewrites, buckets)
        if self._drawn is not None and self._drawn[0] == key:
            return self._drawn[1]
        drawn = self._downsample(buckets)
        self._drawn = (key, drawn)
        return drawn

    def _downsample(self, buckets: int) -> list[float]:
        values = [v for v in self.values if math.isfinite(v)]
        if buckets <= 0 or not values:
            return []
        if len(values) <= buckets:
            return values
        low, high = min(values), max(values)
        middle = (low + high) / 2
        size = len(values) / buckets
        out = []
        for index in range(buckets):
            chunk = values[int(index * size): int((index + 1) * size)] or [values[-1]]
            out.append(max(chunk, key=lambda v: abs(v - middle)))
        return out
