"""One series per metric key, fed by several of verl's loggers at once.

A run can report the same value three ways: the console line (3 decimals
before verl v0.5, full precision since), TensorBoard events (float32 from
torch's ``add_scalar``) and the ``file`` logger's JSONL (the float64 itself).
Whichever arrives first, the model keeps the most exact one and remembers
where it came from, so the step detail can say so.

The source tag costs one byte per value, and only once a series has taken a
value from somewhere other than the console: 100,000 steps × 150 metrics add
15 MB to the 240 MB the values themselves take.
"""

from __future__ import annotations

import math
import struct
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from enum import IntEnum

from tui.model.series import Series, steps_appended, steps_extended


class Source(IntEnum):
    """Where a value came from, from the coarsest to the most exact."""

    CONSOLE = 0
    TENSORBOARD = 1
    JSONL = 2

    @property
    def label(self) -> str:
        """How the step detail names the source."""
        return _LABELS[self]


# Plain names for the members: this runs for every value of a merged run.
_CONSOLE, _JSONL = Source.CONSOLE, Source.JSONL
_INFINITIES = (math.inf, -math.inf)

_LABELS = {
    Source.CONSOLE: "console log",
    Source.TENSORBOARD: "TensorBoard events",
    Source.JSONL: "file logger (JSONL)",
}


def _as_float32(value: float) -> float:
    """``value`` rounded to float32, as torch's ``add_scalar`` stores it (overflow → ±inf)."""
    try:
        rounded: float = struct.unpack("f", struct.pack("f", value))[0]
        return rounded
    except OverflowError:
        return math.copysign(math.inf, value)


def replaces(new: float, new_source: int, old: float, old_source: int) -> bool:
    """Whether ``new`` should replace ``old`` as the value of one key at one step.

    The sources are ``Source`` values, or the plain ints a series keeps them as (an
    IntEnum compares equal to its int; this runs for every merged value).

    * Same source: the later value wins, as for a re-printed console line (a
      resumed run re-does the steps after its last checkpoint).
    * A NaN does not replace an infinity: verl v0.7.1+ writes both as JSON
      ``null``, so the other source knows more.
    * Console against TensorBoard: when the event is the float32 rounding of
      the console value, the console printed the float64 itself (verl v0.5+)
      and is the exact one; otherwise (3-decimal text) the event is.
    * Otherwise the more exact source wins: JSONL, then TensorBoard, then console.
    """
    if new_source == old_source:
        return True
    if new != new and old in _INFINITIES:  # NaN (x != x) over ±inf
        return False
    if _JSONL in (new_source, old_source):
        return new_source == _JSONL
    console, event = (new, old) if new_source == _CONSOLE else (old, new)
    console_is_exact = _as_float32(console) == event or (console != console and event != event)
    return (new_source == _CONSOLE) == console_is_exact


class TaggedSeries(Series):
    """A Series that knows which source each of its values came from."""

    __slots__ = ("_sources",)

    def __init__(self) -> None:
        super().__init__()
        # One Source per value, parallel to ``steps``; None while every value
        # came from the console, which is all that most runs ever have.
        self._sources: array[int] | None = None

    def set(self, step: int, value: float) -> None:
        """Record a console value (the plain Series contract)."""
        self.offer(step, value, Source.CONSOLE)

    def offer(self, step: int, value: float, source: Source) -> bool:
        """Record ``value`` from ``source`` at ``step`` unless a more exact value is there."""
        steps = self.steps
        if steps and step <= steps[-1]:
            return self._offer_earlier(step, value, source)
        # A new last step, the case of nearly every value: no search, no rule
        # (Series._append inline: a fleet's opening appends a million values).
        self.steps = steps_appended(steps, step)
        self.values.append(value)
        if self._sources is not None:
            self._sources.append(source)
        elif source:  # not the console (0): the first value from elsewhere
            self._start_tags(len(self.steps) - 1, source)
        return True

    def extend(self, steps: Sequence[int], values: Sequence[float], source: Source) -> bool:
        """Append console values at ``steps`` (strictly ascending) if they all come after
        the last; False, changing nothing, when they do not or come from elsewhere (the
        caller then offers them one by one)."""
        if source or self._sources is not None or (self.steps and steps[0] <= self.steps[-1]):
            return False
        self.steps = steps_extended(self.steps, steps)
        self.values.extend(values)
        return True

    def source_at(self, step: int) -> Source | None:
        """Where the value at ``step`` came from (None when there is none)."""
        at = bisect_left(self.steps, step)
        if at < len(self.steps) and self.steps[at] == step:
            return self._source_at_index(at)
        return None

    def _source_at_index(self, at: int) -> Source:
        return Source.CONSOLE if self._sources is None else Source(self._sources[at])

    def _offer_earlier(self, step: int, value: float, source: Source) -> bool:
        steps = self.steps
        at = bisect_left(steps, step)
        sources = self._sources
        if steps[at] != step:
            super().set(step, value)  # a step this series lacked: inserted
            if sources is not None:
                sources.insert(at, source)
            elif source:
                self._start_tags(at, source)
            return True
        old_source = sources[at] if sources is not None else _CONSOLE
        if source != old_source and not replaces(value, source, self.values[at], old_source):
            return False
        # Series.set's own overwrite, without a second search: this runs for
        # every value when a whole JSONL is merged over a whole console log.
        self._overwrite(at, value)
        if sources is not None:
            sources[at] = source
        elif source:
            self._start_tags(at, source)
        return True

    def _start_tags(self, at: int, source: Source) -> None:
        """The first value from another source: every earlier one came from the console."""
        self._sources = array("B", bytes(len(self.steps)))
        self._sources[at] = source
