"""What Linux's ``/proc`` says of a process: its ``stat`` line and the answer of a box asked
for several at once.

A hung trainer is told apart by what its process does (DESIGN.md's "What a hang looks like
from outside"): ``S`` asleep on a lock or a timer (its kernel wait channel says which), ``D``
in a disk or NFS wait, ``T`` stopped, ``Z`` a zombie, ``R`` running. ``ps``'s ``%CPU`` is a
lifetime average; the ticks of ``/proc/PID/stat`` read twice say what it does now.

``/proc/PID/stat`` is ``pid (comm) state ppid …``; ``comm`` is the process's own name, up to
15 bytes it may set to anything (spaces, parentheses, ``) R 1``), so the fields are read from
the *last* ``)``. Pure: text in, records out; a line that is not a stat line gives None.
"""

from __future__ import annotations

from dataclasses import dataclass

# Fields after the ``)``, counted from the state (field 3 of proc(5)): ppid 4, utime 14,
# stime 15, num_threads 20, starttime 22.
_PPID, _UTIME, _STIME, _THREADS, _START = 4 - 3, 14 - 3, 15 - 3, 20 - 3, 22 - 3
# The clock ticks per second of nearly every Linux kernel, where a box does not say its own.
DEFAULT_HZ = 100
# Process states proc(5) lists (``I`` idle kernel thread, ``X`` dead, ``W`` paging,
# ``K``/``P`` wakekill/parked of old kernels).
STATES = frozenset("RSDZTtXxKWPI")


@dataclass(frozen=True, slots=True)
class ProcStat:
    """One ``/proc/PID/stat`` line: the state letter, CPU ticks used (user + system) and the
    start, in clock ticks after boot; ``ppid`` its parent (a log's writer's children are
    the ranks a launcher started)."""

    pid: int
    comm: str
    state: str
    ticks: int
    threads: int
    start_ticks: int
    ppid: int = 0


@dataclass(frozen=True, slots=True)
class ProcAnswer:
    """A box's answer about some pids, read at one moment: its uptime (seconds since boot, the
    clock both the CPU ticks and the start are on), its ticks per second, per pid its stat
    (None: no such process there) and kernel wait channel, and where ``py-spy`` is on it."""

    uptime_s: float
    hz: int
    stats: dict[int, ProcStat | None]
    wchans: dict[int, str]
    py_spy: str | None


def parse_proc_stat(line: str) -> ProcStat | None:
    """The fields of a ``/proc/PID/stat`` line, read from its last ``)``; None for anything else."""
    open_at, close_at = line.find(" ("), line.rfind(")")
    if open_at < 1 or close_at < open_at:
        return None
    head, rest = line[:open_at], line[close_at + 1:].split()
    if not head.isdigit() or len(rest) <= _START or rest[0] not in STATES:
        return None
    try:
        return ProcStat(int(head), line[open_at + 2:close_at], rest[0], int(rest[_UTIME]) + int(rest[_STIME]),
                        int(rest[_THREADS]), int(rest[_START]), int(rest[_PPID]))
    except ValueError:
        return None


def parse_proc_answer(text: str) -> ProcAnswer | None:
    """A box's answer to :mod:`tui.sources.process_states`'s read: ``uptime``, ``hz``, then
    ``stat PID LINE`` and ``wchan PID NAME`` per pid (an empty LINE: no such process), and
    ``py-spy PATH``. None when it holds no uptime (not such an answer)."""
    uptime: float | None = None
    hz = DEFAULT_HZ
    stats: dict[int, ProcStat | None] = {}
    wchans: dict[int, str] = {}
    py_spy = None
    for line in text.splitlines():
        word, _, value = line.partition(" ")
        if word == "uptime":
            uptime = _number(value.split()[0] if value.split() else "")
        elif word == "hz" and value.strip().isdigit() and int(value) > 0:
            hz = int(value)
        elif word in ("stat", "wchan"):
            pid, _, said = value.partition(" ")
            if not pid.isdigit():
                continue
            if word == "stat":
                stats[int(pid)] = parse_proc_stat(said)
            elif said.strip() not in ("", "0"):  # a running process has no wait channel: "0"
                wchans[int(pid)] = said.strip()
        elif word == "py-spy" and value.strip():
            py_spy = value.strip()
    return None if uptime is None else ProcAnswer(uptime, hz, stats, wchans, py_spy)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
