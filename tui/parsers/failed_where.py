"""Where a failure happened: the rank, local rank, host and process a failing log names.

On a 64-GPU run "it crashed" is half the answer; the other half is which rank or node, and
the log usually says it, in one of these grammars (learned from the samples under
tests/fixtures/logs; see docs/formats.md):

* a process prefix on the failing lines: torchrun's ``[rank3]:``, Ray's ``(WorkerDict
  pid=7, ip=10.0.0.2)`` (the process and its node);
* a relay's label in front of it: pdsh's and clush's ``node01: ``, ``srun --label``'s task
  number ``3: ``;
* NCCL's own ``[Rank 3]`` or ``[PG ID 0 PG GUID 0(default_pg) Rank 3]`` inside the line;
* torchrun's ``Root Cause (first observed failure)`` entry, one field a line (``host      :
  node07``, ``rank      : 1 (local_rank: 1)``, ``exitcode  : -9 (pid: 957)``), and its log
  line ``failed (exitcode: -9) local_rank: 1 (pid: 957) of binary: …``;
* Ray's raylet on a dead worker: ``… Worker IP address: 10.0.0.2 Worker port: … Worker PID:
  16672 …``;
* Slurm: ``srun: error: node107: task 3: Exited with exit code 1`` and slurmstepd's
  ``*** STEP 812.0 ON node107 CANCELLED AT …``.

Each reader takes what one line says; :func:`merge` keeps the first value of each field, so
the line that names the failure is read first and the lines around it fill in the rest.
Pure: text in, a :class:`Where` out.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace

from tui.parsers.records import Where
from tui.parsers.text import PROCESS_PREFIX, relay_label


NOWHERE = Where()

_RANK_PREFIX = re.compile(r"\[rank(\d+)\]:")
_RAY_PID = re.compile(r"\bpid=(\d+)(?:, ip=([\w.:-]+))?\)")
_NCCL_RANK = re.compile(r"\bRank (\d+)\]")
_BOX_RANK = re.compile(r"^\s*rank\s*: (\d+) \(local_rank: (\d+)\)")
_BOX_HOST = re.compile(r"^\s*host\s*: (\S+)\s*$")
_BOX_PID = re.compile(r"^\s*exitcode\s*: -?\d+ \(pid: (\d+)\)")
_TORCHRUN_FAILED = re.compile(r"failed \(exitcode: -?\d+\) local_rank: (\d+) \(pid: (\d+)\)")
_RAYLET_PID = re.compile(r"\bWorker PID: (\d+)")
_RAYLET_IP = re.compile(r"\bWorker IP address: ([\w.:-]+)")
_SRUN_TASK = re.compile(r"^srun: error: ([\w.-]+): tasks? ([\d,-]+): ")
_SLURM_CANCELLED = re.compile(r"\*\*\* (?:JOB|STEP) \S+ ON (\S+) CANCELLED AT ")
# The torchrun box's heading of the entry that caused the failure, and of the others.
ROOT_CAUSE = "Root Cause (first observed failure):"
OTHER_FAILURES = "Failures:"


def merge(first: Where, then: Where) -> Where:
    """``first`` with the fields it lacks taken from ``then``."""
    filled = {f.name: getattr(then, f.name) for f in fields(first)
              if getattr(first, f.name) in (None, "") and getattr(then, f.name) not in (None, "")}
    return replace(first, **filled) if filled else first


def read_line(raw: str) -> Where:
    """What one line (as the log has it: prefixes and relay labels kept) says of where."""
    where = NOWHERE
    label = relay_label(raw)
    text = raw
    if label is not None:
        kind, value, text = label
        where = Where(host=value) if kind == "host" else Where(rank=int(value))
    prefix = PROCESS_PREFIX.match(text)
    if prefix is not None:
        said = prefix.group(0)
        rank = _RANK_PREFIX.search(said)
        ray = _RAY_PID.search(said)
        where = merge(where, Where(rank=int(rank.group(1)) if rank else None,
                                   pid=int(ray.group(1)) if ray and "(raylet" not in said else None,
                                   host=(ray.group(2) or "") if ray else ""))
        text = text[prefix.end():]
    return merge(where, _said(text))


def _said(text: str) -> Where:
    """Where the words of a line (its prefixes gone) name."""
    if "Worker PID: " in text:
        pid = _RAYLET_PID.search(text)
        ip = _RAYLET_IP.search(text)
        return Where(pid=int(pid.group(1)) if pid else None, host=ip.group(1) if ip else "")
    if (failed := _TORCHRUN_FAILED.search(text)) is not None:
        return Where(local_rank=int(failed.group(1)), pid=int(failed.group(2)))
    if (srun := _SRUN_TASK.match(text)) is not None:
        tasks = srun.group(2)
        return Where(rank=int(tasks) if tasks.isdigit() else None, host=srun.group(1))
    if (cancelled := _SLURM_CANCELLED.search(text)) is not None:
        return Where(host=cancelled.group(1))
    if (nccl := _NCCL_RANK.search(text)) is not None:
        return Where(rank=int(nccl.group(1)))
    return NOWHERE


def read_box_entry(lines: list[str]) -> Where:
    """The fields of one entry of torchrun's error box (``time``, ``host``, ``rank``,
    ``exitcode``…, a line each), from the lines given (cleaned of prefixes)."""
    where = NOWHERE
    for line in lines:
        if (rank := _BOX_RANK.match(line)) is not None:
            where = merge(where, Where(rank=int(rank.group(1)), local_rank=int(rank.group(2))))
        elif (host := _BOX_HOST.match(line)) is not None:
            where = merge(where, Where(host=host.group(1)))
        elif (pid := _BOX_PID.match(line)) is not None:
            where = merge(where, Where(pid=int(pid.group(1))))
    return where


def root_cause_entry(lines: list[str]) -> Where:
    """Where torchrun's box says the failure began: the fields of its ``Root Cause``
    entry (not of the workers it stopped itself, listed under ``Failures:``)."""
    for at, line in enumerate(lines):
        if line.strip() == ROOT_CAUSE:
            entry = []
            for field in lines[at + 1:]:
                if field.strip().startswith("==="):
                    break
                entry.append(field)
            return read_box_entry(entry)
    return NOWHERE
