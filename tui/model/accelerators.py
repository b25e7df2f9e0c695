"""Accelerator history: every device of every watched host, for days, in bounded memory.

A run is watched for days with a reading every 1–2 s per device, and a
multi-node run has dozens of devices. Each device keeps

* the latest ``AcceleratorSample`` (what the panel prints and ``check`` reports),
* a *fine* ring of raw readings (default one hour at 1 s), for the rules and
  short sparklines, and
* a *coarse* ring of per-minute low/high buckets (default seven days), so a
  week-long sparkline still shows every spike: buckets keep min and max, never
  an average that would hide one.

Both rings are typed arrays that stop growing at their capacity and then
overwrite the oldest row: about 0.5 MB per device at the defaults, whatever
the run's length. Unknown readings are NaN inside and None outside.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from tui.parsers.smi.records import AcceleratorSample

METRICS: tuple[str, ...] = ("util_pct", "mem_used_mib", "temp_c", "power_w")
_NAN = math.nan


class _Ring:
    """Rows of (time, low per metric, high per metric) with a fixed capacity, oldest first.

    With ``ranged=False`` a row holds one value per metric (low is high) and
    the second set of arrays is not allocated.
    """

    __slots__ = ("capacity", "times", "lows", "highs", "start")

    def __init__(self, capacity: int, ranged: bool) -> None:
        self.capacity = capacity
        self.times = array("d")
        self.lows = [array("f") for _ in METRICS]
        self.highs = [array("f") for _ in METRICS] if ranged else self.lows
        self.start = 0  # physical position of the oldest row once full

    def __len__(self) -> int:
        return len(self.times)

    def append(self, time: float, lows: list[float], highs: list[float]) -> None:
        if len(self.times) < self.capacity:
            self.times.append(time)
            for column, value in zip(self.lows, lows):
                column.append(value)
            if self.highs is not self.lows:
                for column, value in zip(self.highs, highs):
                    column.append(value)
            return
        at = self.start
        self.times[at] = time
        for column, value in zip(self.lows, lows):
            column[at] = value
        if self.highs is not self.lows:
            for column, value in zip(self.highs, highs):
                column[at] = value
        self.start = (at + 1) % self.capacity

    def _physical(self, logical: int) -> int:
        return (self.start + logical) % len(self.times)

    def oldest(self) -> float | None:
        return self.times[self.start] if self.times else None

    def since(self, time: float) -> Iterator[int]:
        """Physical positions of the rows at or after ``time``, oldest first (binary search)."""
        low, high = 0, len(self.times)
        while low < high:
            middle = (low + high) // 2
            if self.times[self._physical(middle)] < time:
                low = middle + 1
            else:
                high = middle
        return (self._physical(logical) for logical in range(low, len(self.times)))


@dataclass(slots=True)
class HostStatus:
    """The one line the panel shows for a host: ``ok`` is False while readings fail."""

    text: str
    ok: bool
    at: float


class DeviceHistory:
    """One device's latest reading and its bounded history."""

    def __init__(self, sample: AcceleratorSample, fine_capacity: int, coarse_capacity: int,
                 bucket_s: float) -> None:
        self.latest = sample
        self.updated = -math.inf
        self.fine = _Ring(fine_capacity, ranged=False)
        self.coarse = _Ring(coarse_capacity, ranged=True)
        self.bucket_s = bucket_s
        self._bucket_start: float | None = None
        self._bucket_low = [_NAN] * len(METRICS)
        self._bucket_high = [_NAN] * len(METRICS)

    @property
    def host(self) -> str:
        return self.latest.host

    def add(self, sample: AcceleratorSample, at: float) -> None:
        """Record a reading taken at ``at`` (seconds; clamped so time never runs backwards)."""
        at = max(at, self.updated)
        self.latest, self.updated = sample, at
        values = [_NAN if (value := getattr(sample, name)) is None else float(value) for name in METRICS]
        self.fine.append(at, values, values)
        start = at - at % self.bucket_s
        if self._bucket_start is not None and start != self._bucket_start:
            self.coarse.append(self._bucket_start, self._bucket_low, self._bucket_high)
            self._bucket_low, self._bucket_high = [_NAN] * len(METRICS), [_NAN] * len(METRICS)
        self._bucket_start = start
        for column, value in enumerate(values):
            if not math.isnan(value):
                low, high = self._bucket_low[column], self._bucket_high[column]
                self._bucket_low[column] = value if math.isnan(low) else min(low, value)
                self._bucket_high[column] = value if math.isnan(high) else max(high, value)

    def recent(self, metric: str, seconds: float) -> list[tuple[float, float]]:
        """Known (time, value) readings of the last ``seconds`` (as far as the fine ring reaches)."""
        column = self.fine.lows[METRICS.index(metric)]
        return [(self.fine.times[at], float(column[at])) for at in self.fine.since(self.updated - seconds)
                if not math.isnan(column[at])]

    def sparkline(self, metric: str, width: int, span_s: float,
                  now: float | None = None) -> list[tuple[float, float] | None]:
        """``width`` columns covering the ``span_s`` seconds before ``now``: (low, high) per
        column, None where nothing is known. Min and max per column, so no spike is lost.

        The fine ring is used when it reaches back far enough, else the
        per-minute buckets (plus the minute in progress).
        """
        now = self.updated if now is None else now
        start = now - span_s
        column = METRICS.index(metric)
        lows = [math.inf] * width
        highs = [-math.inf] * width
        scale = width / span_s if span_s > 0 else 0.0

        def fold(time: float, low: float, high: float) -> None:
            if math.isnan(low) or time < start or time > now:
                return
            slot = min(int((time - start) * scale), width - 1)
            lows[slot] = min(lows[slot], low)
            highs[slot] = max(highs[slot], high)

        oldest = self.fine.oldest()
        if oldest is not None and (oldest <= start or not len(self.coarse)):
            for at in self.fine.since(start):
                value = self.fine.lows[column][at]
                fold(self.fine.times[at], value, value)
        else:
            for at in self.coarse.since(start - self.bucket_s):
                fold(max(self.coarse.times[at], start), self.coarse.lows[column][at],
                     self.coarse.highs[column][at])
            if self._bucket_start is not None:
                fold(max(self._bucket_start, start), self._bucket_low[column], self._bucket_high[column])
        return [None if lows[slot] == math.inf else (lows[slot], highs[slot]) for slot in range(width)]


class AcceleratorHistory:
    """All devices of all hosts, keyed by (host, UUID or index), plus each host's status."""

    def __init__(self, fine_capacity: int = 3600, coarse_capacity: int = 7 * 24 * 60,
                 bucket_s: float = 60.0) -> None:
        self._devices: dict[tuple[str, str], DeviceHistory] = {}
        self.status: dict[str, HostStatus] = {}
        self._sizes = (fine_capacity, coarse_capacity, bucket_s)

    def add(self, samples: Iterable[AcceleratorSample], at: float) -> None:
        """Record readings taken at ``at``; a device seen for the first time is added."""
        for sample in samples:
            key = (sample.host, sample.key)
            device = self._devices.get(key)
            if device is None:
                device = self._devices[key] = DeviceHistory(sample, *self._sizes)
            device.add(sample, at)

    def set_status(self, host: str, text: str, ok: bool, at: float) -> None:
        """Replace the host's status line (the UI shows the latest only)."""
        self.status[host] = HostStatus(text, ok, at)

    def devices(self, host: str | None = None) -> list[DeviceHistory]:
        """Devices in display order (host, then index), optionally of one host."""
        found = [device for (device_host, _), device in self._devices.items()
                 if host is None or device_host == host]
        return sorted(found, key=lambda device: (device.host, device.latest.index, device.latest.key))

    def latest(self) -> list[AcceleratorSample]:
        """The newest reading of every device, in display order."""
        return [device.latest for device in self.devices()]
