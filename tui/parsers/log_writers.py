"""Who writes a log, as a box's ``/proc`` says: the answer of
:mod:`tui.sources.log_writers`' scan.

A run whose log names no pid (a CPU ``torchrun … | tee log``, a plain ``python train.py >
log``) is still found by its open files: a process with the log open for writing is its
writer (``writer PID FD FLAGS``: ``/proc/PID/fd/FD`` is the log, ``FLAGS`` the octal
``flags:`` of ``/proc/PID/fdinfo/FD``), and where the writer is ``tee``, the processes whose
standard output or error is the pipe tee reads (``feeds PID FD TEE``) are the run. A reader
(rlwatch itself, a ``tail -f``) has the log open too, read-only: the flags tell it apart.
Pure: text in, records out; a line that is not one of these is passed over.
"""

from __future__ import annotations

from dataclasses import dataclass

# open(2)'s access mode bits in ``flags:``, and the two that write.
_ACCESS_MODE = 0o3
_WRITING = (0o1, 0o2)  # O_WRONLY, O_RDWR


@dataclass(frozen=True, slots=True)
class LogWriterScan:
    """What the scan found: ``writers`` the pids with the log open for writing (each with the
    descriptors it writes through), ``feeds`` per writer the pids whose fd 1 or 2 is the pipe
    on that writer's standard input."""

    writers: dict[int, tuple[int, ...]]
    feeds: dict[int, frozenset[int]]


def parse_log_writers(text: str) -> LogWriterScan:
    """The ``writer`` and ``feeds`` lines of a scan's answer; a descriptor opened read-only
    (or whose flags are missing, the process gone meanwhile) is no writer."""
    writers: dict[int, tuple[int, ...]] = {}
    feeds: dict[int, set[int]] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) != 4 or not all(word.isdigit() for word in words[1:]):
            continue
        first, second, third = (int(word) for word in words[1:])
        if words[0] == "writer" and _writes(words[3]):
            writers[first] = (*writers.get(first, ()), second)
        elif words[0] == "feeds" and second in (1, 2):
            feeds.setdefault(third, set()).add(first)
    return LogWriterScan(writers, {writer: frozenset(pids) for writer, pids in feeds.items()})


def _writes(flags: str) -> bool:
    """Whether octal ``flags`` (fdinfo's) open a file for writing."""
    try:
        return (int(flags, 8) & _ACCESS_MODE) in _WRITING
    except ValueError:
        return False
