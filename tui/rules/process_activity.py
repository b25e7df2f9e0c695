"""What the trainer's processes do while its run makes no progress: the third question of a
stall, after "where" (:mod:`tui.rules.stall_phase`) and "are the devices busy"
(:mod:`tui.rules.device_activity`).

The process's state letter tells hangs apart (DESIGN.md's "What a hang looks like from
outside"): ``S`` asleep (its kernel wait channel says on what: ``futex…`` a lock,
``hrtimer_nanosleep`` a timer such as a client's back-off, ``wait_for_partner`` a FIFO,
``pipe_read``/``sk_wait_data`` a pipe or socket), ``D`` waiting on a disk or a network file
system, ``T`` stopped (SIGSTOP, a shell's ^Z), ``t`` held by a debugger, ``Z`` exited and not
reaped, and ``R`` running, busy-waiting in a stuck collective as often as computing. Its CPU
share between two readings says whether it does anything at all. A pid no longer on its host
reads as gone; one an accelerator tool lists that the host's ``/proc`` lacks is in another
pid namespace (a container), said so rather than taken for gone.
Pure: readings in, words out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tui.durations import word_duration
from tui.model.processes import LOG_ORIGIN, ProcessReading, ProcessReadings
from tui.model.run_model import RunModel

GONE = "gone"
# A pid whose process started after the run's last step: not the run's process (its pid was
# given to another since, or the log names a pid of another box).
REUSED = "reused"
# How much later than the last step a process must have started to be taken for another's
# (the box's clock and this one's may differ by a little).
REUSED_AFTER_S = 60.0

STATE_WORDS = {
    "R": "running (R)",
    "S": "asleep (S)",
    "D": "in D (disk or NFS wait)",
    "T": "stopped (T: SIGSTOP or ^Z)",
    "t": "stopped by a debugger (t: traced)",
    "Z": "a zombie (Z: exited, not reaped)",
    "X": "dead (X)",
    "I": "idle (I)",
}
# A state in a word or two, for a one-line status (``… ✖ CRIT stalled · pid 5642 stopped``).
BRIEF_WORDS = {"R": "running", "S": "asleep", "D": "in D (disk/NFS)", "T": "stopped", "t": "traced",
               "Z": "a zombie", GONE: "gone", REUSED: "gone"}
# Kernel wait channels worth a word of their own (prefixes; the name itself is said too).
WAIT_WORDS = (
    ("futex", "a lock or a condition"),
    ("hrtimer_nanosleep", "a timer: a sleep or a back-off"),
    ("wait_for_partner", "a FIFO whose other end nobody opened"),
    ("pipe_read", "a pipe"),
    ("pipe_write", "a pipe"),
    ("sk_wait_data", "a socket"),
    ("unix_stream", "a socket"),
    ("do_epoll_wait", "any of several files or sockets"),
    ("do_select", "any of several files or sockets"),
    ("do_sys_poll", "any of several files or sockets"),
    ("nfs", "a network file system"),
    ("rpc_wait", "a network file system"),
    ("folio_wait", "a disk page"),
    ("io_schedule", "a disk"),
)


@dataclass(frozen=True, slots=True)
class ProcessActivity:
    """One process of the run as last read: ``state`` a proc(5) letter or ``GONE``; ``cpu_pct``
    its CPU share between its last two readings (None with one reading), over ``over_s``;
    ``age_s`` since it started; ``origin`` where its pid came from."""

    host: str
    pid: int
    origin: str
    on_device: bool
    comm: str
    state: str
    wchan: str | None
    cpu_pct: float | None
    over_s: float | None
    age_s: float | None

    def words(self) -> str:
        """``pid 5642 (python3) asleep (S, waiting in futex_do_wait: a lock or a condition),
        0 % CPU over 10 s, up 2 h 01 min (the trainer, by the log's process prefix, on node1)``."""
        name = f"pid {self.pid} ({self.comm})" if self.comm else f"pid {self.pid}"
        source = f"{self.origin}, on {self.host}" if self.host else self.origin
        if self.state == GONE:
            if self.on_device:
                return (f"{name} not in {self.host or 'its host'}'s /proc though an accelerator tool "
                        f"lists it ({self.origin}): another pid namespace (a container?)")
            return f"{name} gone: no such process on {self.host or 'its host'} ({self.origin})"
        if self.state == REUSED:
            return (f"pid {self.pid} on {self.host or 'its host'} is {self.comm or 'a process'} started after "
                    f"the run's last step, not the run's ({self.origin}): the run's process is gone")
        said = STATE_WORDS.get(self.state, f"in state {self.state}")
        if self.state == "S" and self.wchan:
            said = f"asleep (S, waiting in {self.wchan}{_wait_words(self.wchan)})"
        elif self.state == "D" and self.wchan:
            said = f"in D (disk or NFS wait, in {self.wchan})"
        parts = [said]
        if self.cpu_pct is not None and self.over_s is not None:
            over = f"{self.over_s:.2g} s" if self.over_s < 60 else word_duration(self.over_s)
            parts.append(f"{self.cpu_pct:.0f} % CPU over {over}")
        if self.age_s is not None:
            parts.append(f"up {word_duration(self.age_s)}")
        return f"{name} {', '.join(parts)} ({source})"

    def to_json(self) -> dict[str, object]:
        """The ``check --json`` form (a contract): the reading's facts, each a field a script can
        test (``state == "T"``), and ``words``, the finding's own sentence of it."""
        return {"host": self.host, "pid": self.pid, "origin": self.origin, "on_device": self.on_device,
                "comm": self.comm or None, "state": self.state, "wchan": self.wchan,
                "cpu_pct": _rounded(self.cpu_pct), "over_s": _rounded(self.over_s),
                "age_s": _rounded(self.age_s), "words": self.words()}


def run_processes(model: RunModel) -> list[ProcessActivity]:
    """``model``'s processes as read since its last step (before any step: since its log was
    last written): what a stall of it says."""
    since = model.last_step_at if model.last_step is not None else model.last_write_at
    return process_activity(model.processes, since if since is not None else -math.inf)


def unwritten_words(model: RunModel) -> str | None:
    """Where the run's processes were looked for by who writes its log since its last step
    (or write) and none was found: ``processes: nothing on HOST has the log open for
    writing …``; else None."""
    since = model.last_step_at if model.last_step is not None else model.last_write_at
    writers = model.processes.writers
    if writers is None or writers.found or (since is not None and writers.at < since):
        return None
    return (f"processes: nothing on {writers.host or 'its host'} has the log open for writing "
            f"(the run's processes have ended, or it is written from another machine)")


def process_activity(readings: ProcessReadings, since: float) -> list[ProcessActivity]:
    """Each watched process read at or after ``since`` (the last step's time), as it stands."""
    return [_activity(before, latest, since) for before, latest in readings.latest(since)]


def process_words(activities: list[ProcessActivity]) -> str | None:
    """The processes' part of a stalled finding: ``processes: …``, with what a stopped,
    waiting-on-disk or gone trainer means; None without readings."""
    if not activities:
        return None
    said = "processes: " + "; ".join(activity.words() for activity in activities)
    meaning = process_meaning(activities)
    return f"{said}; {meaning}" if meaning is not None else said


def process_meaning(activities: list[ProcessActivity]) -> str | None:
    """What the processes' states mean together, where they say something: a stopped
    process, one waiting on a disk, or all of them gone; else None."""
    states = {activity.state for activity in activities}
    if states & {"T", "t"}:
        return "a stopped process runs nothing until continued (kill -CONT), and the run waits on it"
    if "D" in states:
        return "a process in D waits on a disk or network file system that does not answer"
    if activities and all(activity.state in (GONE, REUSED) and not activity.on_device for activity in activities):
        return "the run's processes have ended"
    return None


def process_brief(activities: list[ProcessActivity]) -> str | None:
    """The trainer's state in a few words (``pid 5642 stopped``): the log's own process where
    it was read, else the first device holder; None without readings."""
    if not activities:
        return None
    first = next((activity for activity in activities if activity.origin.startswith(LOG_ORIGIN)), activities[0])
    return f"pid {first.pid} {BRIEF_WORDS.get(first.state, first.state)}"


def _activity(before: ProcessReading | None, latest: ProcessReading, since: float) -> ProcessActivity:
    watched, stat = latest.watched, latest.stat
    if stat is None:
        return ProcessActivity(watched.host, watched.pid, watched.origin, watched.on_device, "", GONE,
                               None, None, None, None)
    cpu = over = None
    if before is not None and before.stat is not None and before.stat.start_ticks == stat.start_ticks:
        over = latest.uptime_s - before.uptime_s
        if over > 0:
            cpu = max(0.0, 100.0 * (stat.ticks - before.stat.ticks) / latest.hz / over)
        else:
            over = None
    age = latest.uptime_s - stat.start_ticks / latest.hz
    state = REUSED if math.isfinite(since) and latest.at - age > since + REUSED_AFTER_S else stat.state
    return ProcessActivity(watched.host, watched.pid, watched.origin, watched.on_device, stat.comm, state,
                           latest.wchan, cpu, over, age if age >= 0 else None)


def _rounded(value: float | None) -> float | None:
    """A share or a duration to a tenth: the readings' ticks are a hundredth of a second."""
    return None if value is None else round(value, 1)


def _wait_words(wchan: str) -> str:
    """``: a lock or a condition`` for a wait channel that has a word, else ``""``."""
    for prefix, words in WAIT_WORDS:
        if wchan.startswith(prefix):
            return f": {words}"
    return ""
