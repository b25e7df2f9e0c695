"""The median of a growing series, kept up to date a point at a time.

The stalled rule compares the run's silence with its typical step time, the
median of every step's time, and the dashboard judges a followed run a few
times a second. Worked out afresh, the median of a million steps is a sort of a
million values (0.22 CPU-s here) per judgement; kept as the series' values in sorted
order, a new step is one insertion into that order.
"""

from __future__ import annotations

import math
from array import array
from bisect import insort

from tui.model.series import Series

# More new points than this since the last reading: the order is made again from all of
# them (one sort) rather than taking each in (a search and a move of the ones above it).
_REBUILD_AFTER = 256


class RunningMedian:
    """The median of ``series``' finite positive values (None while it has none)."""

    __slots__ = ("series", "_rewrites", "_seen", "_ordered")

    def __init__(self, series: Series) -> None:
        self.series = series
        self._rewrites = series.rewrites
        self._seen = 0
        self._ordered = array("d")

    def median(self) -> float | None:
        """What ``statistics.median`` says of the values now, without sorting them again."""
        series = self.series
        values = series.values
        if series.rewrites != self._rewrites or len(values) - self._seen > _REBUILD_AFTER:
            self._rewrites = series.rewrites
            self._ordered = array("d", sorted(filter(_counts, values)))
        else:
            for value in values[self._seen:]:
                if _counts(value):
                    insort(self._ordered, value)
        self._seen = len(values)
        ordered, count = self._ordered, len(self._ordered)
        if not count:
            return None
        middle = count // 2
        return ordered[middle] if count % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _counts(value: float) -> bool:
    """A step time the median takes: finite and positive."""
    return math.isfinite(value) and value > 0
