"""Lines that mean a run is failing: tracebacks, OOM, collective timeouts, dead actors, kills.

Each kind is found in two steps. A plain substring (a *needle*) picks the
candidate lines at memchr speed, here and in the ``grep -F`` that runs on a
remote box; then a pattern confirms that the line says what a failing run
prints and not the same words in prose ("to avoid running out of memory",
"Killed two birds"). The first kind that confirms wins, most specific first,
so an OOM traceback line is an OOM.

A marker line is only where a failure shows; what failed — the exception
line at the end of the traceback — is read from the lines after it by
:mod:`tui.parsers.crash_block`, which needs the bytes around the marker.
"""

from __future__ import annotations

import re

from tui.parsers.records import IncidentRecord
from tui.parsers.text import PROCESS_PREFIX

OOM = "oom"
COLLECTIVE_TIMEOUT = "collective-timeout"
ACTOR_DIED = "actor-died"
RAY_ERROR = "ray-error"
HYDRA_ERROR = "hydra-error"
KILLED = "killed"
FATAL_SIGNAL = "fatal-signal"
TRACEBACK = "traceback"

# A traceback frame: ``  File "/verl/trainer/main_ppo.py", line 42, in run``.
FRAME_NEEDLE = '", line '

# (kind, needles, confirming pattern or None when a needle says enough).
# Needles are chosen to be rare in the natural-language chatter that fills
# real logs (reward functions print whole model answers): each one costs the
# box's grep a little on every byte of a multi-gigabyte log.
INCIDENT_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str] | None], ...] = (
    # torch's ``CUDA out of memory`` / ``NPU out of memory`` / ``HIP out of memory``,
    # ``torch.OutOfMemoryError``, Ray's ``ray.exceptions.OutOfMemoryError`` and the
    # raylet's "killed due to memory pressure", XLA's ``RESOURCE_EXHAUSTED``, the
    # kernel's ``Out of memory: Killed process``, torch's CPU allocator.
    (OOM, ("ut of memory", "OutOfMemoryError", "RESOURCE_EXHAUSTED", "memory pressure",
           "can't allocate memory"),
     re.compile(r"\b(?:CUDA|NPU|HIP|XPU|GPU|MPS|CPU|[Dd]evice)\s+out of memory"
                r"|Out of memory: Kill|OutOfMemoryError|RESOURCE_EXHAUSTED"
                r"|killed due to memory pressure|can't allocate memory"
                r"|^\s*(?:[\w.]+(?:Error|Exception))\b.*out of memory")),
    # NCCL's watchdog (``Watchdog caught collective operation timeout``) and its
    # ``watchdog thread terminated`` follow-up.
    (COLLECTIVE_TIMEOUT, ("Watchdog caught collective operation timeout",), None),
    # ``ActorDiedError: The actor died unexpectedly…`` and the raylet's
    # ``A worker died or was killed…``.
    (ACTOR_DIED, ("died unexpectedly", "died or was killed", "ActorDiedError"), None),
    # Ray's own reports of a failed task: ``Unhandled error (suppress with …)``,
    # ``ray.exceptions.RayTaskError(XxxError)``, ``RaySystemError``.
    (RAY_ERROR, ("Unhandled error", "RayTaskError", "RaySystemError"),
     re.compile(r"Unhandled error \(suppress|RayTaskError|RaySystemError")),
    (HYDRA_ERROR, ("Error executing job with overrides",), None),
    # The shell's report of a child killed by SIGKILL (the kernel's OOM killer,
    # a scheduler): ``run.sh: line 3: 12345 Killed  python3 …`` or a bare ``Killed``.
    (KILLED, ("Killed",), re.compile(r"^(?:[^:\n]*: line \d+: +)?(?:\d+ +)?Killed(?:\s|$)")),
    # A process that died of a signal or aborted in C++.
    (FATAL_SIGNAL, ("Segmentation fault", "core dumped", "Fatal Python error",
                    "terminate called after throwing"), None),
    # A traceback's header, or its first frame where the header was cut off
    # (a log excerpt, a header glued into another process's line).
    (TRACEBACK, ("Traceback (most recent call last)", FRAME_NEEDLE),
     re.compile(r'Traceback \(most recent call last\)|^File "[^"]*", line \d+')),
)
# The kinds ranked as the cause a user needs to hear first: the ones that say
# why a process died, then the ones that only say that it did.
CAUSE_ORDER = (OOM, COLLECTIVE_TIMEOUT, FATAL_SIGNAL, KILLED, ACTOR_DIED, RAY_ERROR, HYDRA_ERROR,
               TRACEBACK)
ROOT_CAUSES = frozenset((OOM, COLLECTIVE_TIMEOUT, FATAL_SIGNAL, KILLED))
# How each kind reads in a finding.
KIND_WORDS = {
    OOM: "out of memory",
    COLLECTIVE_TIMEOUT: "collective (NCCL/HCCL) timeout",
    ACTOR_DIED: "Ray actor died",
    RAY_ERROR: "Ray task failed",
    HYDRA_ERROR: "the job failed (Hydra)",
    KILLED: "killed (SIGKILL, often the kernel's OOM killer)",
    FATAL_SIGNAL: "the process aborted",
    TRACEBACK: "exception",
}
# The text kept per incident; the full context is read by offset when needed.
_MAX_TEXT = 400


def incident_needles() -> tuple[str, ...]:
    """Every needle of every kind, for the scanner and the box's grep."""
    return tuple(needle for _, needles, _ in INCIDENT_PATTERNS for needle in needles)


def match_incident(segment: str, offset: int) -> IncidentRecord | None:
    """Return an incident if ``segment`` (a cleaned line) says a run is failing."""
    for kind, needles, confirm in INCIDENT_PATTERNS:
        if not any(needle in segment for needle in needles):
            continue
        text = segment.strip()
        if confirm is not None and confirm.search(PROCESS_PREFIX.sub("", text)) is None:
            continue
        return IncidentRecord(kind=kind, text=text[:_MAX_TEXT], offset=offset)
    return None
