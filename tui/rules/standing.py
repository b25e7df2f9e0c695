"""Since when a band has stood broken: the step a warning becomes a note of the run.

A band is *standing* from the earliest hit after which at least ``share`` of the
judged points are hits (dips back inside the band do not restart it). Asked on
every judgement of a 100,000-step run, a scan back over the hits would cost
100,000 steps each time; this keeps the answer incrementally instead.

For the hit at point index ``p`` that had ``k`` hits before it, the share test at a
time with ``P`` points and ``H`` hits is ``(H - k) - share·(P - p) ≥ 0``, that is
``g = share·p - k ≥ share·P - H``: ``g`` is fixed when the hit arrives and only the
threshold moves. The earliest hit meeting it is the first of the hits whose ``g``
beats every earlier one's (the running records), found by bisection.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(slots=True)
class Standing:
    """The hits of one band on one series, fed point by point in step order."""

    share: float
    points: int = 0
    hits: int = 0
    # The running records: g ascending, with the hit's step, point index and hits before it.
    _gains: list[float] = field(default_factory=list)
    _records: list[tuple[int, int, int]] = field(default_factory=list)

    def feed(self, step: int, hit: bool) -> None:
        """One more judged point, at ``step``, a hit or not."""
        if hit:
            gain = self.share * self.points - self.hits
            if not self._gains or gain > self._gains[-1]:
                self._gains.append(gain)
                self._records.append((step, self.points, self.hits))
            self.hits += 1
        self.points += 1

    def since(self) -> tuple[int, int, int, int] | None:
        """(the step it has stood since, hits since, points since, that hit's point index),
        or None where no hit is followed by enough others."""
        at = bisect_left(self._gains, self.share * self.points - self.hits)
        if at == len(self._gains):
            return None
        step, point, before = self._records[at]
        return step, self.hits - before, self.points - point, point

    def catch_up(self, hits: Sequence[int], steps: Sequence[int], judged: int) -> None:
        """Feed the points of ``steps[:judged]`` not fed yet; ``hits`` are the hit steps,
        ascending, a subset of ``steps``."""
        for point in range(self.points, judged):
            step = steps[point]
            self.feed(step, self.hits < len(hits) and hits[self.hits] == step)
