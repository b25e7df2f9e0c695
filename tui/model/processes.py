"""The trainer's processes as read on their boxes while a run looks stuck.

Which processes: the one the log names in its step lines' process prefix (Ray's
``(TaskRunner pid=N)``: the process that prints the steps) and the ones the accelerator tools
list as holding a device (nvidia-smi's compute apps, npu-smi's processes); where neither names
one, those that write the log (:mod:`tui.model.log_writers`). Each is kept with
where its pid came from, so a finding can say why it names that process, and with its last
two readings, so what it does *now* (CPU ticks between them) is known rather than its lifetime
average. A handful at most (``MAX_WATCHED``): a run's driver and one process per device.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.model.accelerators import AcceleratorHistory
from tui.parsers.proc_stat import ProcStat

# The most processes read on a run: a driver and the device holders of an 8-GPU node.
MAX_WATCHED = 9


# Where a pid named by the log came from.
LOG_ORIGIN = "the trainer, by the log's process prefix"


@dataclass(frozen=True, slots=True)
class Watched:
    """A process worth reading: its host, pid, where the pid came from (``LOG_ORIGIN``,
    ``holds GPU 0``), and whether an accelerator tool lists it (then a host's ``/proc``
    without it is in another pid namespace, not a process gone)."""

    host: str
    pid: int
    origin: str
    on_device: bool = False


def watched_processes(log_pid: int | None, log_host: str,
                      accelerators: AcceleratorHistory) -> list[Watched]:
    """The run's processes worth reading: the log's own (``log_pid``, read on the log's host:
    a Ray worker on another node is not looked for there) and each process an accelerator
    tool lists on a host it reads, at most ``MAX_WATCHED``."""
    watched: dict[tuple[str, int], Watched] = {}
    if log_pid is not None and log_pid > 0:
        watched[(log_host, log_pid)] = Watched(log_host, log_pid, LOG_ORIGIN)
    for sample in accelerators.latest():
        for process in sample.processes:
            key = (sample.host, process.pid)
            if process.pid <= 0:
                continue
            known = watched.get(key)
            if known is not None:
                watched[key] = Watched(known.host, known.pid, f"{known.origin}; holds device {sample.index}", True)
            elif len(watched) < MAX_WATCHED:
                watched[key] = Watched(sample.host, process.pid, f"holds device {sample.index}", True)
    return list(watched.values())


@dataclass(frozen=True, slots=True)
class ProcessReading:
    """One reading of a watched process: ``stat`` None when there is no such process on its
    host; ``uptime_s``/``hz`` the box's clock at the reading; ``at`` the reader's own time
    (the model's clock, to compare with the last step's)."""

    watched: Watched
    at: float
    uptime_s: float
    hz: int
    stat: ProcStat | None
    wchan: str | None


@dataclass(frozen=True, slots=True)
class LogWriters:
    """What a look for the log's writers on ``host`` found at ``at`` (the model's clock):
    ``found`` the processes it chose to read, none when nothing writes the log any more."""

    host: str
    at: float
    found: tuple[Watched, ...]


class ProcessReadings:
    """The latest two readings of each watched process, where py-spy is on each host, and the
    last look for the log's writers."""

    def __init__(self) -> None:
        self._readings: dict[tuple[str, int], tuple[ProcessReading | None, ProcessReading]] = {}
        # Host → py-spy's path there, or None where it was looked for and is not installed.
        self.py_spy: dict[str, str | None] = {}
        # The last look for who writes the log (None: never looked, a pid was known otherwise).
        self.writers: LogWriters | None = None

    def add(self, reading: ProcessReading) -> None:
        """Keep ``reading`` as its process's latest, the one before as its previous."""
        key = (reading.watched.host, reading.watched.pid)
        before = self._readings.get(key)
        self._readings[key] = (before[1] if before is not None else None, reading)
        if len(self._readings) > MAX_WATCHED:  # the longest unread goes
            del self._readings[min(self._readings, key=lambda k: self._readings[k][1].at)]

    def latest(self, since: float) -> list[tuple[ProcessReading | None, ProcessReading]]:
        """(previous, latest) of each process read at or after ``since``, the previous None
        where it was read before ``since`` or not at all; in the order they were first read."""
        return [(before if before is not None and before.at >= since else None, latest)
                for before, latest in self._readings.values() if latest.at >= since]
