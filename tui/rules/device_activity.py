"""Whether anything is still happening on the accelerators since a run's last step.

A stalled run's next question after "where" is "is anything still running". The devices'
readings since the last step tell three hangs apart (DESIGN.md's "What a hang looks like from
outside", measured on 2×H200 with NCCL):

* **idle** — utilisation near 0: the device waits on something off it (a dead worker, the
  reward, I/O; a rank asleep before a collective);
* **spinning** — utilisation high with power and memory flat and low: a rank waiting in a stuck
  collective busy-waits at 100 % utilisation and idle power (168 W against 400–570 W for real
  compute on an H200); utilisation alone says "busy", power says "waiting". Flat alone is not
  enough (an H100 burning at its 700 W cap reads 697–700 W): low is against what the device drew
  while the run stepped, or against an idle device beside it;
* **released** — the memory the run held is given back: its process is gone;

and **working**: busy with power that moves, a slow phase rather than a hang. Anything else is
**unclear** (half busy, no power reading). A device with fewer than two readings since the last
step is left out.
Pure: readings in, words out.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from tui.model.accelerators import AcceleratorHistory, DeviceHistory

IDLE = "idle"
SPINNING = "spinning"
RELEASED = "released"
WORKING = "working"
UNCLEAR = "unclear"

# Mean utilisation (%) under which a device is idle, and over which it is busy.
IDLE_UTIL_PCT = 5.0
BUSY_UTIL_PCT = 50.0
# Power is flat when its readings stay within this share of their mean (the hung H200's 168.30
# and 168.37 W; real compute swings by tens of watts between readings).
FLAT_POWER_SHARE = 0.05
# Memory is flat when it moves by less than this (a stuck rank allocates nothing).
FLAT_MEMORY_MIB = 64.0
# Memory is released when the latest reading is under this share of the most held in the
# readings kept from before the last step on, and that most was a real hold (not an idle device).
RELEASED_SHARE = 0.1
HELD_MIB = 1024.0
# How much before the last step the power drawn and memory held are looked at.
BEFORE_S = 600.0
# Busy at flat power is waiting, not computing, at most at this share of the most power the
# device drew while the run stepped, or at most this multiple of an idle device's power on the
# same host (the hung H200s: 168 W spinning beside 123 W idle; 400–570 W computing).
STEPPING_SHARE = 0.5
IDLE_SIBLING_RATIO = 1.5

WORDS = {
    IDLE: "idle",
    SPINNING: "busy with flat power and memory (waiting in a collective?)",
    RELEASED: "its memory released (the process is gone?)",
    WORKING: "busy, power moving (still computing)",
    UNCLEAR: "neither idle nor clearly computing or waiting",
}


@dataclass(frozen=True, slots=True)
class DeviceActivity:
    """One device's state since the last step, with the readings that say so: how many,
    their means, and the device and span they were read on (``host``, ``index``, from
    ``first_at`` to ``last_at``), so a reader can say where each word came from."""

    name: str    # "node1:0"
    state: str   # IDLE, SPINNING, RELEASED, WORKING or UNCLEAR
    readings: int
    util_pct: float
    power_w: float | None
    mem_mib: float | None
    host: str = ""
    index: int = 0
    first_at: float = 0.0
    last_at: float = 0.0

    def words(self) -> str:
        """``node1:0 busy with flat power and memory (…) (100 %, 168 W, 2 readings)``."""
        said = [f"{self.util_pct:.0f} %"]
        if self.power_w is not None:
            said.append(f"{self.power_w:.0f} W")
        if self.mem_mib is not None:
            said.append(f"{self.mem_mib:.0f} MiB")
        return f"{self.name} {WORDS[self.state]} ({', '.join(said)}; {self.readings} readings)"


def device_activity(history: AcceleratorHistory, since: float) -> list[DeviceActivity]:
    """Each device's state from its readings at or after ``since`` (the last step's time);
    devices with fewer than two such readings are left out."""
    readings = [(device, _Readings.of(device, since)) for device in history.devices()]
    idle_power: dict[str, float] = {}  # host → the lowest power of its idle devices
    for device, read in readings:
        if read is not None and read.util and statistics.fmean(read.util) < IDLE_UTIL_PCT and read.power:
            idle_power[device.host] = min(idle_power.get(device.host, math.inf), statistics.fmean(read.power))
    return [_activity(device, read, idle_power.get(device.host)) for device, read in readings if read is not None]


def activity_words(activities: list[DeviceActivity], after: str) -> str | None:
    """The devices' part of a stalled finding: ``devices since step 4: …``, with what a mix
    of states usually means; None without readings."""
    if not activities:
        return None
    listed = ", ".join(activity.words() for activity in activities)
    said = f"devices {after}: {listed}"
    meaning = mix_meaning(activities)
    return f"{said}; {meaning}" if meaning is not None else said


def mix_meaning(activities: list[DeviceActivity]) -> str | None:
    """What the devices' states together usually mean (None: nothing more than each says)."""
    states = {activity.state for activity in activities}
    if states == {RELEASED}:
        return "every device gave its memory back: the run's processes are gone"
    if states == {IDLE}:
        return "every device idle: waiting on something off the devices (a dead worker, the reward, I/O)"
    if SPINNING in states and IDLE in states:
        return ("some spin in a collective while others are idle: the rank on an idle device "
                "is usually the one the others wait for")
    if states == {SPINNING}:
        return "every device spins at flat power: a collective stuck (NCCL/HCCL)"
    return None


@dataclass(frozen=True, slots=True)
class _Readings:
    """A device's readings since the last step, and the most power and memory it drew in the
    readings kept from before it."""

    util: list[float]
    times: list[float]  # when each utilisation reading was taken
    power: list[float]
    memory: list[float]
    power_before: float | None
    memory_before: float | None

    @classmethod
    def of(cls, device: DeviceHistory, since: float) -> _Readings | None:
        """None with fewer than two utilisation readings since ``since``."""
        back = device.updated - since + BEFORE_S

        def split(metric: str) -> tuple[list[tuple[float, float]], float | None]:
            readings = device.recent(metric, back)
            before = [v for t, v in readings if t < since]
            return [(t, v) for t, v in readings if t >= since], max(before, default=None)

        util, _ = split("util_pct")
        power, power_before = split("power_w")
        memory, memory_before = split("mem_used_mib")
        if len(util) < 2:
            return None
        return cls([v for _, v in util], [t for t, _ in util], [v for _, v in power],
                   [v for _, v in memory], power_before, memory_before)


def _activity(device: DeviceHistory, read: _Readings, idle_power: float | None) -> DeviceActivity:
    """One device's state from its readings since the last step. Busy at flat power is
    spinning only against a baseline: its own power while it stepped (at most half of it), or
    an idle device's on the same host (at most 1.5× it); a GPU at its power cap is flat too."""
    mean_util = statistics.fmean(read.util)
    mean_power = statistics.fmean(read.power) if read.power else None
    held = max(read.memory + ([read.memory_before] if read.memory_before is not None else []), default=0.0)
    state = UNCLEAR
    if read.memory and held >= HELD_MIB and read.memory[-1] < RELEASED_SHARE * held:
        state = RELEASED
    elif mean_util < IDLE_UTIL_PCT:
        state = IDLE
    elif mean_util >= BUSY_UTIL_PCT and mean_power is not None and len(read.power) >= 2:
        flat = _flat(read.power, FLAT_POWER_SHARE * mean_power) and _flat(read.memory, FLAT_MEMORY_MIB)
        low = ((read.power_before is not None and mean_power <= STEPPING_SHARE * read.power_before)
               or (idle_power is not None and mean_power <= IDLE_SIBLING_RATIO * idle_power))
        if not flat or (read.power_before is not None and not low):
            state = WORKING
        elif low:
            state = SPINNING
    name = f"{device.host}:{device.latest.index}" if device.host else f"GPU {device.latest.index}"
    return DeviceActivity(name, state, len(read.util), mean_util, mean_power,
                          read.memory[-1] if read.memory else None, device.host, device.latest.index,
                          read.times[0], read.times[-1])


def _flat(values: list[float], within: float) -> bool:
    """At least two readings, all within ``within`` of each other."""
    return len(values) >= 2 and max(values) - min(values) <= within
