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
from tui.parsers.text import PROCESS_PREFIX, strip_log_header, strip_stamp

OOM = "oom"
COLLECTIVE_TIMEOUT = "collective-timeout"
DEVICE_ERROR = "device-error"
ACTOR_DIED = "actor-died"
RAY_ERROR = "ray-error"
HYDRA_ERROR = "hydra-error"
KILLED = "killed"
FATAL_SIGNAL = "fatal-signal"
EXITED = "exited"
TRACEBACK = "traceback"

# A traceback frame: ``  File "/verl/trainer/main_ppo.py", line 42, in run``.
FRAME_NEEDLE = '", line '
# The line a traceback ends on: ``RuntimeError: boom``, ``torch.OutOfMemoryError:
# CUDA out of memory…``, ``ray.exceptions.RayTaskError(OutOfMemoryError): ray::…``,
# a bare ``AssertionError``, ``KeyboardInterrupt``, an asyncio TaskGroup's
# ``ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)``. Warnings
# (``UserWarning: …``) are not exceptions, and neither is a bare ``Error:`` (no
# Python class prints so).
EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*"
    r"(?:[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure|Fault|Timeout|ExceptionGroup)"
    r"|Exception|KeyboardInterrupt|SystemExit|StopIteration|GeneratorExit)"
    r"(?:\([\w.]+\))?(?::(?=\s|$)|\s*$)"
)
# Where a line begins once the noise in front of a failure is gone: a tqdm bar
# it is glued to, a log-paste's line number (``[1833] ``).
_LEAD = re.compile(r"^(?:\[\d+\] )?(?:[^|\n]{0,200}?\d{1,3}%\|[^|\n]{0,400}\|[^\[\n]{0,40}"
                   r"\[[^\]\n]{0,80}\])?")

# (kind, needles, confirming pattern or None when a needle says enough).
# Needles are chosen to be rare in the natural-language chatter that fills
# real logs (reward functions print whole model answers): each one costs the
# box's grep a little on every byte of a multi-gigabyte log.
INCIDENT_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str] | None], ...] = (
    # torch's ``CUDA out of memory`` / ``NPU out of memory`` / ``HIP out of memory``,
    # ``torch.OutOfMemoryError``, Ray's ``ray.exceptions.OutOfMemoryError`` and the
    # raylet's "killed due to memory pressure", XLA's ``RESOURCE_EXHAUSTED``, the
    # kernel's ``Out of memory: Killed process``, torch's CPU allocator; Slurm's cgroup
    # killer (``slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of
    # the step tasks have been OOM Killed.``, before 20.11 ``Detected 1 oom-kill event(s)
    # in StepId=191.batch cgroup.``) and srun's ``srun: error: node107: task 0: Out Of Memory``;
    # slurmstepd's own memory enforcement (``slurmstepd: error: Job 7518 exceeded memory limit
    # (626359956 > 512000000), being killed``, before 17.x without ``error:``), which comes
    # before the job's ``CANCELLED AT`` line and says why. (Its ``Exceeded job memory limit at
    # some point.`` is no kill: Slurm prints it of jobs that succeeded too.)
    # Slurm's killer is picked by ``Detected `` and told by the pattern: on seed 001's chatter
    # the box's grep spends an eighth more on ``kill event`` (its ``k``) than on ``Detected``.
    (OOM, ("ut of memory", "OutOfMemoryError", "RESOURCE_EXHAUSTED", "memory pressure",
           "can't allocate memory", "Detected ", ": Out Of Memory", "exceeded memory limit"),
     re.compile(r"\b(?:CUDA|NPU|HIP|XPU|GPU|MPS|CPU|[Dd]evice)\s+out of memory"
                r"|Out of memory: Kill|OutOfMemoryError|RESOURCE_EXHAUSTED"
                r"|killed due to memory pressure|can't allocate memory"
                r"|^\s*(?:[\w.]+(?:Error|Exception))\b.*out of memory"
                r"|\bDetected \d+ oom[_-]kill event|^srun: error: \S+: tasks? [\d,-]+: Out Of Memory"
                r"|^slurmstepd\S*: (?:error: )?(?:Job|Step) \S+ exceeded memory limit \(\d+ > \d+\), being killed")),
    # NCCL's watchdog (``Watchdog caught collective operation timeout``) and what
    # follows it (``Process group watchdog thread terminated``, ``Some NCCL
    # operations have failed or timed out``); torch's heartbeat monitor, which
    # aborts the process when the watchdog itself hangs (torch 2.4+: ``ProcessGroupNCCL's
    # watchdog got stuck for 480 seconds …`` then ``Terminating the process after
    # attempting to dump debug info``; torch 2.2–2.3: ``Heartbeat monitor timed out!``).
    # Each rank's account of where its collectives stand once one has timed out (``[PG ID 0
    # PG GUID 0(default_pg) Rank 1] Received a dump signal … Last enqueued NCCL work: 9, last
    # completed NCCL work: 9.``, ``Timeout at NCCL work: 610, last enqueued NCCL work: 616``):
    # the rank whose last enqueued work is behind the others' never reached the collective.
    (COLLECTIVE_TIMEOUT, ("Watchdog caught collective", "watchdog thread terminated",
                          "NCCL operations have failed", "watchdog got stuck",
                          "Heartbeat monitor timed out",
                          "Terminating the process after attempting to dump debug info",
                          "enqueued NCCL work: "), None),
    # The accelerator itself failed: CUDA errors and device-side asserts, and
    # Ascend CANN's ``EH9999: Inner Error!`` (its own ``TraceBack`` block follows). torch's
    # ``Warning: CUDA warning: device-side assert triggered (function ~CUDAEvent)``, which a
    # process that already failed prints for each CUDA object it frees, is no failure of its own.
    (DEVICE_ERROR, ("CUDA error", "device-side assert", "illegal memory access", "Assertion `",
                    "Inner Error"),
     re.compile(r"^(?!.*\bWarning: CUDA warning: )(?:.*?(?:CUDA error|device-side assert"
                r"|illegal memory access|Assertion `.*` failed|E[A-Z0-9]\d{4}: Inner Error)"
                r"|E[A-Z0-9]\d{4}: )")),
    # ``ActorDiedError: The actor died unexpectedly…``, the raylet's ``A worker
    # died or was killed…`` (a weak sign on its own: see ``weak``), and Ray's
    # reason for a death printed without the exception's name (a launcher's
    # ``error: The actor is dead because its worker process has died.``). An actor
    # dead "because all references to the actor were removed" was let go on purpose.
    (ACTOR_DIED, ("died unexpectedly", "died or was killed", "ActorDiedError",
                  "actor is dead because"),
     re.compile(r"died unexpectedly|died or was killed|ActorDiedError"
                r"|actor is dead because (?:its (?:worker process|owner|node) has died"
                r"|of an error raised)")),
    # Ray's own reports of a failed task or job: ``Unhandled error (suppress with …)``,
    # ``ray.exceptions.RayTaskError(XxxError)``, ``RaySystemError``, ``Job 'raysubmit_…'
    # failed``, ``Job entrypoint command failed with exit code 1``.
    (RAY_ERROR, ("Unhandled error", "RayTaskError", "RaySystemError", "raysubmit_",
                 "entrypoint command failed"),
     re.compile(r"Unhandled error \(suppress|RayTaskError|RaySystemError|Job '[^']+' failed"
                r"|entrypoint command failed")),
    (HYDRA_ERROR, ("Error executing job with overrides",), None),
    # A child killed by SIGKILL (the kernel's OOM killer, a scheduler) or
    # SIGTERM, as the shell says it (``run.sh: line 3: 12345 Killed  python3 …``,
    # a bare ``Killed`` or ``Terminated``, ``已杀死`` in a Chinese locale) or a launcher does (DeepSpeed's
    # ``sigkill_handler] Killing subprocess N`` once one rank has failed), or Slurm stopping
    # the job (``slurmstepd: error: *** JOB 494583 ON node CANCELLED AT 2024-04-20T09:09:37 DUE
    # TO TIME LIMIT ***``: SIGTERM, then SIGKILL). (srun's ``task 1-7: Killed`` is not one:
    # srun kills the other tasks once one has failed, and that one says why.) torchrun's
    # error box says it of a worker that died so: ``traceback : Signal 9 (SIGKILL) received
    # by PID 10285`` (SIGTERM there is torchrun stopping the other workers: not a cause).
    (KILLED, ("Killed", "已杀死", "Killing subprocess", "Terminated", " CANCELLED AT ",
              "received by PID"),
     re.compile(r"^(?:[^:\n]*: line \d+: +)?(?:\d+ +)?(?:Killed|已杀死|Terminated)(?:\s|$)"
                r"|sigkill_handler\] Killing subprocess"
                r"|\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT \S+.*\*\*\*"
                r"|Signal 9 \(SIGKILL\) received by PID")),
    # A process that died of a signal or aborted in C++ (glog's ``*** SIGSEGV
    # received at time=…``; SIGTERM/SIGINT are how runs are stopped on purpose), or
    # that a C++ assertion aborted: glog's and Ray's ``CHECK`` at a source location
    # (``[2025-07-06 07:14:27,052 C 2915798 2915798] task_receiver.cc:219:  Check failed:
    # objects_valid``, glog ``F0827 12:00:00.123 42 file.cc:42] Check failed: x == y``),
    # which logs at the fatal level and aborts after its stack trace.
    (FATAL_SIGNAL, ("Segmentation fault", "core dumped", "Fatal Python error",
                    "terminate called after throwing", "received at time=", "Check failed: ",
                    "received by PID"),
     re.compile(r"Segmentation fault|core dumped|Fatal Python error|terminate called after"
                r"|\*\*\* SIG(?!TERM|INT)[A-Z]+ received at time="
                r"|Signal \d+ \(SIG(?:SEGV|ABRT|BUS|ILL|FPE)\) received by PID"
                r"|\.(?:cc|cpp|h):\d+(?:\]|:) +Check failed: ")),
    # A launcher's report that a rank's process exited with an error status, which says that
    # it ended, not why: srun's ``srun: error: node107: task 3: Exited with exit code 1``
    # (the task number is the rank srun gave it; ``tasks 0-1,3: …`` for several).
    (EXITED, ("Exited with exit code",),
     re.compile(r"^srun: error: \S+: tasks? [\d,-]+: Exited with exit code [1-9]")),
    # A traceback's header, its first frame where the header was cut off (a
    # log excerpt, a header glued into another process's line), or its
    # exception line alone.
    (TRACEBACK, ("Traceback (most recent call last)", FRAME_NEEDLE, "Error:", "Exception:",
                 "KeyboardInterrupt"), None),
)
_TRACEBACK_LINE = re.compile(r'Traceback \(most recent call last\)|^File "[^"]*", line \d+')
# The kinds ranked as the cause a user needs to hear first: the ones that say
# why a process died, then the ones that only say that it did.
CAUSE_ORDER = (OOM, COLLECTIVE_TIMEOUT, DEVICE_ERROR, FATAL_SIGNAL, KILLED, ACTOR_DIED, RAY_ERROR,
               HYDRA_ERROR, TRACEBACK, EXITED)
ROOT_CAUSES = frozenset((OOM, COLLECTIVE_TIMEOUT, DEVICE_ERROR, FATAL_SIGNAL, KILLED))
# How each kind reads in a finding.
KIND_WORDS = {
    OOM: "out of memory",
    COLLECTIVE_TIMEOUT: "collective (NCCL/HCCL) timeout",
    DEVICE_ERROR: "accelerator error (CUDA/NPU)",
    ACTOR_DIED: "Ray actor died",
    RAY_ERROR: "Ray task failed",
    HYDRA_ERROR: "the job failed (Hydra)",
    KILLED: "killed (SIGKILL, often the kernel's OOM killer, or SIGTERM)",
    FATAL_SIGNAL: "the process aborted",
    EXITED: "a rank's process exited with an error",
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
        text = strip_stamp(segment.strip())
        line = _LEAD.sub("", PROCESS_PREFIX.sub("", text), count=1).strip()
        line = strip_log_header(PROCESS_PREFIX.sub("", line)).strip()
        if kind == TRACEBACK:
            if not (_TRACEBACK_LINE.search(line) or EXCEPTION_LINE.match(line)):
                continue
        elif confirm is not None and confirm.search(line) is None:
            continue
        return IncidentRecord(kind=kind, text=text[:_MAX_TEXT], offset=offset)
    return None


def weak(incident_text: str) -> bool:
    """A marker that alone says nothing fatal: the raylet's "A worker died or was
    killed" is printed for workers Ray restarts and for its own teardown; the
    driver's error that follows a real death is what names it."""
    return "died or was killed" in incident_text and EXCEPTION_LINE.match(incident_text) is None
