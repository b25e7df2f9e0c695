"""Where each step's line lies in the log, so its raw text costs one range read.

The text of step N is everything between the end of step N-1's line and the
end of step N's line: the samples, chatter and tracebacks printed while N ran.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right


class StepIndex:
    """Steps (ascending) with the byte span of the line that reported each."""

    __slots__ = ("steps", "starts", "ends")

    def __init__(self) -> None:
        self.steps = array("q")
        self.starts = array("q")
        self.ends = array("q")

    def __len__(self) -> int:
        return len(self.steps)

    def add(self, step: int, start: int, end: int) -> bool:
        """Record the line for ``step``; True if the step is new.

        A step reported again (later line wins) moves to the newer line.
        """
        at = len(self.steps) if not self.steps or step > self.steps[-1] else bisect_left(self.steps, step)
        if at < len(self.steps) and self.steps[at] == step:
            self.starts[at], self.ends[at] = start, end
            return False
        self.steps.insert(at, step)
        self.starts.insert(at, start)
        self.ends.insert(at, end)
        return True

    def extend(self, steps: array[int], starts: array[int], ends: array[int]) -> bool:
        """Append lines whose steps strictly ascend after the last (a backfill, in one
        piece); False, changing nothing, when they do not (the caller adds them one by one)."""
        if not steps or (self.steps and steps[0] <= self.steps[-1]):
            return False
        self.steps.extend(steps)
        self.starts.extend(starts)
        self.ends.extend(ends)
        return True

    def last_step(self) -> int | None:
        """The highest step seen."""
        return self.steps[-1] if self.steps else None

    def step_before(self, offset: int) -> int | None:
        """The last step whose line ended at or before byte ``offset`` (None before the first)."""
        at = bisect_right(self.ends, offset)
        return self.steps[at - 1] if at > 0 else None

    def span(self, step: int) -> tuple[int, int] | None:
        """Byte range of step ``step``'s text: from the previous step line's end to its own end."""
        at = bisect_left(self.steps, step)
        if at >= len(self.steps) or self.steps[at] != step:
            return None
        begin = self.ends[at - 1] if at > 0 else 0
        return min(begin, self.starts[at]), self.ends[at]
