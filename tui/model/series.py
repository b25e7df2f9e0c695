"""A metric's values over steps, stored compactly.

A week-long run can hold 100,000 steps × 150 metrics; a typed array of values
per metric keeps that in a few hundred megabytes where a dict per step would
not. The steps beside them nearly always step evenly (1, 2, 3, … for training
metrics, every tenth for validation): they are held as a ``range`` (a few
bytes for a million steps: half a million-step run's memory otherwise) until a
step breaks the stride, and as a typed array from then on.
Steps almost always arrive in order, so appends are O(1); a re-printed step
(a validation line at a resumed step, steps re-done after a restart) is
found by bisection and overwritten: the later line wins.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from functools import reduce
from operator import add
from typing import TypeAlias

# Points per block summary (see Series._block_lo).
BLOCK = 64

# A series' steps: evenly strided ones as a range, any others as an array.
Steps: TypeAlias = "range | array[int]"


def steps_appended(steps: Steps, step: int) -> Steps:
    """``steps`` with ``step`` (past their last) after them: a range while the stride holds
    (a second step sets it), else an array (made once, then appended to in place)."""
    if isinstance(steps, range):
        if len(steps) < 2:
            stride = step - steps[0] if steps else 1
            return range(steps[0] if steps else step, step + stride, stride)
        if step == steps[-1] + steps.step:
            return range(steps.start, step + steps.step, steps.step)
        steps = array("q", steps)
    steps.append(step)
    return steps


def steps_extended(steps: Steps, more: Sequence[int]) -> Steps:
    """``steps`` with ``more`` (ascending, past their last) after them, a range while every
    step keeps the stride."""
    if not more:
        return steps
    if isinstance(steps, range):
        first = steps[0] if steps else more[0]
        stride = steps.step if len(steps) > 1 else (more[0] - first if steps else
                                                    (more[1] - more[0] if len(more) > 1 else 1))
        stop = more[-1] + stride
        if stride > 0 and stop - first == stride * (len(steps) + len(more)) and \
                array("q", more) == array("q", range(more[0], stop, stride)):
            return range(first, stop, stride)
        steps = array("q", steps)
    steps.extend(more)
    return steps


def steps_inserted(steps: Steps, at: int, step: int) -> array[int]:
    """``steps`` with ``step`` inserted at index ``at`` (an array from then on)."""
    if isinstance(steps, range):
        steps = array("q", steps)
    steps.insert(at, step)
    return steps


class Series:
    """Values of one metric keyed by step, ascending."""

    __slots__ = ("steps", "values", "rewrites", "_range", "_drawn", "_block_lo", "_block_hi",
                 "_stale", "_sum", "_count", "_summarised")

    def __init__(self) -> None:
        self.steps: Steps = range(0)
        self.values = array("d")
        # Bumped whenever a point other than a new last one changes, so a
        # reader that works incrementally (the rules) knows to start over.
        self.rewrites = 0
        # (min, max) of the finite values, or None; like the block summaries,
        # the sum and the count below, it is brought up to the newest point
        # when read (``_refresh``), so a redraw of a 100k-point panel does not
        # rescan the series, and a metric nobody draws costs nothing per step.
        self._range: tuple[float, float] | None = None
        # The last downsample, keyed by (points, rewrites, buckets).
        self._drawn: tuple[tuple[int, int, int], list[float]] | None = None
        # Finite min and max of every BLOCK consecutive points (nan: none finite):
        # drawing 100k points then reads 3k numbers, not 100k.
        self._block_lo = array("d")
        self._block_hi = array("d")
        # Set when a point other than a new last one changed: the range and
        # the block summaries are rebuilt on their next use, not on every write
        # (merging a whole JSONL over a whole console log rewrites every point).
        self._stale = False
        # Sum and count of the finite values: their mean is the "middle" a
        # drawn point strays from (see downsample).
        self._sum = 0.0
        self._count = 0
        # How many points, from the first, the range, sum, count and blocks cover.
        self._summarised = 0

    def __len__(self) -> int:
        return len(self.steps)

    def set(self, step: int, value: float) -> None:
        """Record ``value`` at ``step``, replacing an earlier value for that step."""
        steps = self.steps
        if not steps or step > steps[-1]:
            self._append(step, value)
            return
        at = bisect_left(steps, step)
        if at < len(steps) and steps[at] == step:
            self._overwrite(at, value)
        else:
            self.steps = steps_inserted(steps, at, step)
            self.values.insert(at, value)
            self._history_changed()

    def _append(self, step: int, value: float) -> None:
        """A new last point (the summaries take it in when next read)."""
        self.steps = steps_appended(self.steps, step)
        self.values.append(value)

    def _overwrite(self, at: int, value: float) -> None:
        """Replace the value at index ``at`` (a re-printed or more exact value)."""
        self.values[at] = value
        self._history_changed()

    def _history_changed(self) -> None:
        self.rewrites += 1
        self._stale = True

    def _refresh(self) -> None:
        """Bring the range, sum, count and block summaries up to the newest point:
        rebuilt whole after history changed, else only the points appended since.

        The points are taken a slice at a time by C loops (``filter``, ``min``,
        ``reduce``), not one by one: the rules and the fleet's rows read freshly
        backfilled series of a thousand points each, twenty runs of them.
        Ties and sums come out as a point-by-point fold would have them (the
        first of equal extremes kept, the sum added in order).
        """
        values = self.values
        if self._stale:
            self._stale = False
            self._range = self._scan_range()
            finite = [v for v in values if math.isfinite(v)]
            self._sum, self._count = math.fsum(finite), len(finite)
            self._block_lo, self._block_hi = array("d"), array("d")
            self._summarise(0)
            return
        start = self._summarised
        if start == len(values):
            return
        finite = list(filter(math.isfinite, values[start:]))
        if finite:
            low, high = self._range or (finite[0], finite[0])
            self._range = (min(low, min(finite)), max(high, max(finite)))
            self._sum = reduce(add, finite, self._sum)
            self._count += len(finite)
        self._summarise(start)

    def _summarise(self, start: int) -> None:
        """Fold the points from index ``start`` into their blocks' min and max."""
        values, lows, highs = self.values, self._block_lo, self._block_hi
        for block_start in range(start - start % BLOCK, len(values), BLOCK):
            block = block_start // BLOCK
            if block == len(lows):
                lows.append(math.nan)
                highs.append(math.nan)
            finite = list(filter(math.isfinite, values[max(start, block_start):block_start + BLOCK]))
            if finite:
                low, high = lows[block], highs[block]
                least, most = min(finite), max(finite)
                lows[block] = least if not low <= least else low  # nan-aware min
                highs[block] = most if not high >= most else high
        self._summarised = len(values)

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
        self._refresh()
        return self._range

    def finite_sum(self) -> float:
        """The sum of the finite values (kept up to date like the mean, not rescanned)."""
        self._refresh()
        return self._sum

    def finite_mean(self) -> float | None:
        """The mean of the finite values (kept up to date with the range, not rescanned)."""
        self._refresh()
        return self._sum / self._count if self._count else None

    def _scan_range(self) -> tuple[float, float] | None:
        finite = [v for v in self.values if math.isfinite(v)]
        return (min(finite), max(finite)) if finite else None

    def downsample(self, buckets: int) -> list[float]:
        """At most ``buckets`` values for drawing, keeping every spike.

        Each bucket contributes the value that strays furthest from the
        series' mean, so a one-step spike up *or* down survives
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
        self._refresh()
        if buckets > 0 and self._range is not None and len(self.values) // BLOCK >= 2 * buckets:
            return self._downsample_blocks(buckets)
        values = [v for v in self.values if math.isfinite(v)]
        if buckets <= 0 or not values:
            return []
        if len(values) <= buckets:
            return values
        middle = math.fsum(values) / len(values)
        size = len(values) / buckets
        out = []
        for index in range(buckets):
            chunk = values[int(index * size): int((index + 1) * size)] or [values[-1]]
            out.append(max(chunk, key=lambda v: abs(v - middle)))
        return out

    def _downsample_blocks(self, buckets: int) -> list[float]:
        """Downsample from the block summaries: each bucket takes the block min or max
        that strays furthest from the series' mean, so no spike is lost either."""
        middle = self._sum / self._count
        count = len(self._block_lo)
        size = count / buckets
        out = []
        for index in range(buckets):
            start, stop = int(index * size), int((index + 1) * size)
            candidates = [v for v in (*self._block_lo[start:stop], *self._block_hi[start:stop])
                          if math.isfinite(v)]
            if candidates:
                out.append(max(candidates, key=lambda v: abs(v - middle)))
        return out
