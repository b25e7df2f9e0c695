"""What Slurm's own commands say of a job, as a ``JobRecord``: ``scontrol``, ``sacct``, ``squeue``.

rlwatch asks the login node the way its users do, and reads the answers here:

* ``scontrol show job -o JOBID`` — the controller's record, one line of
  ``Key=Value`` fields (``JobState``, ``Reason``, ``ExitCode``, ``RunTime``,
  ``TimeLimit``, ``StartTime``, ``EndTime``, ``NodeList``, ``StdOut``…). The
  controller forgets a job ``MinJobAge`` after it ends (300 s by default).
  Slurm 22.05 (Debian 12) has no ``scontrol --json`` (it came with the
  data_parser plugins of 23.02), so the one-line form, which every version
  prints, is the one read. Its values are not quoted: a value is everything up
  to the next `` Key=``, so a ``Comment`` that itself holds `` Key=`` text can
  shadow a later field.
* ``sacct -X -n -P -j JOBID --format=…`` — the accounting database's record,
  ``|``-separated in the order of ``SACCT_FIELDS``; it remembers the job after
  the controller forgets it, when accounting (slurmdbd) is on. Where it is
  off, sacct prints only ``Slurm accounting storage is disabled``
  (``accounting_off``). ``StdOut`` is a sacct field only from Slurm 23.02 on;
  an older sacct is asked without it, and the log is then looked for where
  sbatch writes it by default (``WorkDir/slurm-JOBID.out``).
* ``squeue --me -h -o SQUEUE_FORMAT`` — the user's jobs, one line each.

Times are asked for in UTC (``TZ=UTC`` on the remote command) and read as
such; a running job's start is taken as ``now - RunTime`` instead, which no
clock difference between the login node and this machine can skew.

Node lists are Slurm host lists (``expand_hostlist``).
"""

from __future__ import annotations

import calendar
import itertools
import re
import time
from dataclasses import dataclass, replace

from tui.parsers.records import JobOutcome, JobRecord

SCHEDULER = "Slurm"

# What sacct prints (on stderr) where AccountingStorageType is accounting_storage/none.
ACCOUNTING_OFF = "Slurm accounting storage is disabled"
# What scontrol prints for a job the controller does not know (never had, or forgot).
UNKNOWN_JOB = "Invalid job id specified"

# The sacct fields asked for, in order (every one exists since Slurm 20.11); ``StdOut`` is
# appended where the sacct is new enough to know it (23.02).
SACCT_FIELDS = ("JobIDRaw", "JobName", "State", "ExitCode", "NodeList", "Timelimit",
                "Start", "End", "Reason", "WorkDir")
# squeue's ``-o`` format: id, state, time used, time limit, nodes, reason, and the name last
# (a name may hold the separator; it is split off last).
SQUEUE_FORMAT = "%i|%T|%M|%l|%N|%r|%j"

# Slurm's states (squeue(1) "JOB STATE CODES") by what they mean for the run. A job
# COMPLETING has ended but its nodes are still cleaning up: the next look says how it ended.
_PENDING = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD"}
_RUNNING = {"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "RESIZING", "SIGNALING", "STAGE_OUT"}
_SUCCEEDED = {"COMPLETED"}
_FAILED = {"FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE",
           "SPECIAL_EXIT"}
_STOPPED = {"CANCELLED", "PREEMPTED", "REVOKED"}

# Time-limit words that mean "no limit" (scontrol: UNLIMITED; sacct, squeue: UNLIMITED,
# Partition_Limit when the partition's applies, INFINITE in slurm.conf).
_NO_LIMIT = {"UNLIMITED", "INFINITE", "PARTITION_LIMIT", "NONE", "N/A", ""}
# A host list larger than this is refused rather than expanded (a hostile or broken value).
MAX_HOSTS = 65536

# ``Key=`` at the start of a scontrol field: keys are words with ``:`` and ``/`` inside
# (``AllocNode:Sid``, ``CPUs/Task``).
_FIELD = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_:/]*)=")


class SlurmAnswerError(ValueError):
    """Text that is not the answer of the Slurm command it was read as."""


@dataclass(frozen=True, slots=True)
class SlurmJob:
    """A job as Slurm describes it: the record for the verdict, and where its output goes.

    ``stdout`` is the path sbatch writes the job's output to (None: not said);
    ``guessed_stdout`` marks a path inferred from sbatch's default, not said by Slurm.
    """

    record: JobRecord
    name: str = ""
    stdout: str | None = None
    guessed_stdout: bool = False


def outcome_of(state: str) -> JobOutcome:
    """The outcome a Slurm state means (``CANCELLED by 1000`` reads as ``CANCELLED``).

    A state this table does not know (a newer Slurm's) is taken as still running: the next
    look may know better, and a run is never called over on a word rlwatch cannot read."""
    word = state.split(None, 1)[0].rstrip("+").upper() if state.strip() else ""
    if word in _PENDING:
        return JobOutcome.PENDING
    if word in _SUCCEEDED:
        return JobOutcome.SUCCEEDED
    if word in _FAILED:
        return JobOutcome.FAILED
    if word in _STOPPED:
        return JobOutcome.STOPPED
    return JobOutcome.RUNNING


def parse_duration(text: str) -> float | None:
    """A Slurm duration in seconds; None for "no limit" (``UNLIMITED``, ``Partition_Limit``).

    The forms are Slurm's own (sbatch(1) ``--time``): ``minutes``, ``minutes:seconds``,
    ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes`` and
    ``days-hours:minutes:seconds``. SlurmAnswerError for anything else."""
    text = text.strip()
    if text.upper() in _NO_LIMIT:
        return None
    days, dash, rest = text.partition("-")
    if not dash:
        days, rest = "0", text
    parts = rest.split(":")
    if not days.isdigit() or not all(part.isdigit() for part in parts) or len(parts) > 3:
        raise SlurmAnswerError(f"not a Slurm duration: {text!r}")
    numbers = [int(part) for part in parts]
    if dash:  # days-hours[:minutes[:seconds]]
        hours, minutes, seconds = (numbers + [0, 0])[:3]
    elif len(numbers) == 3:
        hours, minutes, seconds = numbers
    else:  # minutes[:seconds]
        hours, (minutes, seconds) = 0, (numbers + [0])[:2]
    return float(((int(days) * 24 + hours) * 60 + minutes) * 60 + seconds)


def expand_hostlist(text: str) -> tuple[str, ...]:
    """The host names a Slurm host list names, in order: ``gpu[01-03,07]`` →
    gpu01 gpu02 gpu03 gpu07.

    The grammar is Slurm's (hostlist.c; ``scontrol show hostnames``): names are separated
    by commas or white space outside brackets; a name is literal text, or text and
    bracketed range lists (``[1-3,7]``) ending with a bracket, several brackets giving
    every combination (``a[1-2]b[1-2]`` → a1b1 a1b2 a2b1 a2b2); a range keeps the zero
    padding of its lower bound (``node[001-3]`` → node001 … node003). ``(null)`` and
    empty mean no node. SlurmAnswerError for what Slurm refuses too (unbalanced
    brackets, a reversed range, text after the last bracket) and for more than
    ``MAX_HOSTS`` names; ``tests/sources/slurm`` compares this with
    ``scontrol show hostnames``."""
    text = text.strip()
    if text in ("", "(null)", "None"):
        return ()
    hosts: list[str] = []
    for name in _split_top_level(text):
        hosts.extend(_expand_name(name))
        if len(hosts) > MAX_HOSTS:
            raise SlurmAnswerError(f"a host list of more than {MAX_HOSTS} names: {text[:80]!r}")
    return tuple(hosts)


def _split_top_level(text: str) -> list[str]:
    names, current, depth = [], "", 0
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise SlurmAnswerError(f"unbalanced ']' in host list {text[:80]!r}")
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                names.append(current)
            current = ""
        else:
            current += char
    if depth:
        raise SlurmAnswerError(f"unbalanced '[' in host list {text[:80]!r}")
    if current:
        names.append(current)
    return names


def _expand_name(name: str) -> list[str]:
    """One name with brackets: every combination of its range lists, first bracket outermost."""
    pieces: list[list[str]] = []
    for literal, ranges in re.findall(r"([^\[]*)(?:\[([^\]]*)\])?", name):
        if literal:
            pieces.append([literal])
        if ranges:
            pieces.append(_expand_ranges(ranges, name))
    if "[" in name and not name.endswith("]"):  # Slurm reads no text after the last bracket
        raise SlurmAnswerError(f"text after the last bracket of host list {name[:80]!r}")
    return ["".join(combination) for combination in itertools.product(*pieces)]


def _expand_ranges(ranges: str, name: str) -> list[str]:
    values: list[str] = []
    for part in ranges.split(","):
        low, dash, high = part.strip().partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise SlurmAnswerError(f"not a range in host list {name[:80]!r}: {part!r}")
        start, end = int(low), int(high) if dash else int(low)
        if end < start or end - start >= MAX_HOSTS:
            raise SlurmAnswerError(f"a range that cannot be expanded in {name[:80]!r}: {part!r}")
        values.extend(str(number).zfill(len(low)) for number in range(start, end + 1))
    return values


def scontrol_fields(line: str) -> dict[str, str]:
    """``Key=Value Key=Value …`` (one line of ``scontrol show job -o``) as a dict; the
    first of a repeated key wins."""
    matches = list(_FIELD.finditer(line))
    fields: dict[str, str] = {}
    for match, after in itertools.zip_longest(matches, matches[1:]):
        end = after.start() if after is not None else len(line)
        fields.setdefault(match.group(1), line[match.end():end].strip())
    return fields


def parse_scontrol(text: str, now: float | None = None) -> SlurmJob:
    """``TZ=UTC scontrol show job -o JOBID``'s answer (its first line: an array's first
    task) as a SlurmJob; SlurmAnswerError if it is not one (``UNKNOWN_JOB``, an error)."""
    line = next((line for line in text.splitlines() if line.startswith("JobId=")), None)
    if line is None:
        raise SlurmAnswerError(first_line(text) or "scontrol said nothing")
    fields = scontrol_fields(line)
    state = fields.get("JobState", "")
    outcome = outcome_of(state)
    now = time.time() if now is None else now
    run_time = _duration_or_none(fields.get("RunTime", ""))
    started = ended = None
    if outcome == JobOutcome.RUNNING and run_time is not None:
        started = now - run_time
    elif outcome != JobOutcome.PENDING:
        started, ended = _utc(fields.get("StartTime", "")), _utc(fields.get("EndTime", ""))
    record = JobRecord(
        SCHEDULER, fields.get("JobId", ""), state, outcome,
        message=_message(fields.get("Reason", ""), fields.get("ExitCode", ""), outcome),
        nodes=expand_hostlist(fields.get("NodeList", "")),
        time_limit_s=_duration_or_none(fields.get("TimeLimit", "")),
        started_at=started, ended_at=ended, note="scontrol")
    stdout = fields.get("StdOut") or None
    return SlurmJob(record, fields.get("JobName", ""), stdout)


def sacct_command_fields(with_stdout: bool) -> str:
    """The ``--format`` value for ``SACCT_FIELDS`` (and ``StdOut``)."""
    return ",".join(SACCT_FIELDS + (("StdOut",) if with_stdout else ()))


def parse_sacct(text: str, job_id: str) -> SlurmJob:
    """``TZ=UTC sacct -X -n -P -j JOBID --format=…``'s answer (with or without the trailing
    ``StdOut`` field) as a SlurmJob; SlurmAnswerError if sacct did not describe the job
    (``accounting_off``, an unknown job, an error)."""
    rows = [line.split("|") for line in text.splitlines() if "|" in line]
    row = next((row for row in rows if row[0] == job_id and len(row) >= len(SACCT_FIELDS)), None)
    if row is None:
        raise SlurmAnswerError(first_line(text) or f"sacct knows no job {job_id}")
    job, name, state, exit_code, nodes, limit, start, end, reason, workdir, *stdout = row
    outcome = outcome_of(state)
    record = JobRecord(
        SCHEDULER, job, state, outcome, message=_message(reason, exit_code, outcome),
        nodes=expand_hostlist(nodes if nodes != "None assigned" else ""),
        time_limit_s=_duration_or_none(limit),
        started_at=_utc(start), ended_at=_utc(end) if outcome not in (JobOutcome.PENDING,
                                                                       JobOutcome.RUNNING) else None,
        note="sacct")
    path = expand_output_pattern(stdout[0], job, name, nodes) if stdout and stdout[0] else None
    guessed = path is None and bool(workdir)
    if guessed:  # an sacct older than 23.02 does not say: sbatch's default
        path = f"{workdir.rstrip('/')}/slurm-{job}.out"
    return SlurmJob(record, name, path, guessed_stdout=guessed)


def expand_output_pattern(path: str, job_id: str, name: str, nodes: str) -> str:
    """An sbatch ``--output`` file name pattern (sbatch(1) "filename pattern") with what is
    known of the job filled in: ``%j``/``%A`` the job id, ``%x`` its name, ``%N`` its first
    node, ``%%`` a percent sign; a pattern it cannot fill (``%u``, ``%a``) is left as is."""
    first = next(iter(expand_hostlist(nodes)), "") if nodes and nodes != "None assigned" else ""
    known = {"j": job_id, "A": job_id, "x": name, "N": first, "%": "%"}

    def fill(match: re.Match[str]) -> str:
        value = known.get(match.group(2))
        return match.group(0) if value is None else value.zfill(int(match.group(1) or 0))

    return re.sub(r"%(\d*)([A-Za-z%])", fill, path)


def accounting_off(text: str) -> bool:
    """sacct's answer says accounting (slurmdbd) is off on this cluster."""
    return ACCOUNTING_OFF in text


def unknown_to_controller(text: str) -> bool:
    """scontrol's answer says the controller does not know the job (never had it, or
    forgot it ``MinJobAge`` after it ended)."""
    return UNKNOWN_JOB in text


def parse_squeue(text: str, now: float | None = None) -> list[SlurmJob]:
    """``squeue -h -o SQUEUE_FORMAT``'s lines as SlurmJobs (lines not in that form are
    skipped: a banner, a warning)."""
    now = time.time() if now is None else now
    jobs = []
    for line in text.splitlines():
        parts = line.split("|", 6)
        if len(parts) != 7 or not parts[0].strip():
            continue
        job, state, used, limit, nodes, reason, name = parts
        outcome = outcome_of(state)
        try:
            run_time = _duration_or_none(used)
            record = JobRecord(SCHEDULER, job.strip(), state, outcome,
                               message=_message(reason, "", outcome), nodes=expand_hostlist(nodes),
                               time_limit_s=_duration_or_none(limit),
                               started_at=now - run_time if run_time and outcome != JobOutcome.PENDING
                               else None, note="squeue")
        except SlurmAnswerError:
            continue
        jobs.append(SlurmJob(record, name))
    return jobs


def forgotten(job: SlurmJob, why: str) -> SlurmJob:
    """The last word on ``job``, kept after the scheduler can no longer be asked (``why``)."""
    return replace(job, record=replace(job.record, note=why))


def _message(reason: str, exit_code: str, outcome: JobOutcome) -> str:
    """Slurm's reason and exit code in words: ``NonZeroExitCode, exit code 1``."""
    parts = [reason] if reason and reason not in ("None", "(null)") else []
    status, _, signal = exit_code.partition(":")
    if outcome not in (JobOutcome.PENDING, JobOutcome.RUNNING):
        if status.isdigit() and int(status):
            parts.append(f"exit code {status}")
        if signal.isdigit() and int(signal):
            parts.append(f"signal {signal}")
    return ", ".join(parts)


def _duration_or_none(text: str) -> float | None:
    try:
        return parse_duration(text)
    except SlurmAnswerError:
        return None


def _utc(text: str) -> float | None:
    """``2026-11-24T03:42:09`` (printed under ``TZ=UTC``) in epoch seconds; None for
    ``Unknown``, ``None`` and the like."""
    try:
        return float(calendar.timegm(time.strptime(text.strip(), "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return None


def first_line(text: str) -> str:
    """The first line of an answer that says anything (an error's message), stripped."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
