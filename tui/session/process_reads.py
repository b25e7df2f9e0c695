"""Reading a run's processes on their hosts into its model: what a session does while the run
looks stuck, and ``rlwatch status`` once for a stalled run.

Which processes: :func:`tui.model.processes.watched_processes` (the log's own, read on the
log's host unless a scheduler runs the job elsewhere, and the devices' holders on the hosts whose
devices listed them); each host is
asked about all of its pids in one round trip (:mod:`tui.sources.process_states`). Where
neither names a pid and the log is a file on its host, the processes that write it are
looked for there and read in the same round trip (:mod:`tui.sources.log_writers`,
:mod:`tui.model.log_writers`). A host that cannot be read now is left for the next time: its
processes keep their last readings.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from tui.model.accelerators import AcceleratorHistory
from tui.model.log_writers import writer_processes
from tui.model.processes import MAX_WATCHED, LogWriters, ProcessReading, Watched, watched_processes
from tui.model.run_model import RunModel
from tui.parsers.proc_stat import ProcAnswer
from tui.sources.accelerators.hosts import AcceleratorHost
from tui.sources.base import FileLog, JobSource, LogSource, SourceError
from tui.sources.log_writers import read_log_writers
from tui.sources.process_states import read_process_states_twice


def log_host(source: LogSource) -> AcceleratorHost | None:
    """Where the pid the log names lives: the log's own host, unless a scheduler runs the job
    elsewhere (a Slurm login node is only the way in: a pid read there is another's)."""
    if isinstance(source, JobSource) and not source.own_host_runs_job:
        return None
    return source.accelerator_host()


def log_file(source: LogSource) -> str | None:
    """The log's path on ``log_host``, where its writers can be looked for; None for a log
    that is no file there (a Ray job's, read through its API; a Slurm job's, written on a node)."""
    if log_host(source) is None or not isinstance(source, FileLog):
        return None
    return source.file_path


def reachable_processes(model: RunModel, accelerators: AcceleratorHistory, here: AcceleratorHost | None,
                  hosts: Mapping[str, AcceleratorHost]) -> tuple[list[Watched], dict[str, AcceleratorHost]]:
    """The run's processes worth reading that are on a host rlwatch can reach, and those hosts
    by name: ``here`` the log's pid's host (``log_host``), ``hosts`` those whose devices are read."""
    reachable = {**hosts, **({here.name: here} if here is not None else {})}
    watched = watched_processes(model.steps_pid if here is not None else None,
                                here.name if here is not None else "", accelerators)
    return [w for w in watched if w.host in reachable], reachable


async def read_processes(model: RunModel, accelerators: AcceleratorHistory, here: AcceleratorHost | None,
                         hosts: Mapping[str, AcceleratorHost], again_after_s: float = 0.0,
                         log: str | None = None) -> bool:
    """One reading of ``model``'s processes into ``model.processes`` (``reachable_processes``),
    and unless ``again_after_s`` is 0 a second that long after it in the same round trip (their
    CPU share between the two), the hosts read at once; True when any host answered. Where
    no pid is known, the processes writing ``log`` (its path on ``here``) are read instead."""
    watched, reachable = reachable_processes(model, accelerators, here, hosts)
    if not watched and here is not None and log:
        return await _read_writers(model, here, log, again_after_s)
    groups: dict[str, list[Watched]] = {}
    for one in watched:
        groups.setdefault(one.host, []).append(one)
    told = await asyncio.gather(*(_read_group(model, reachable[name], group, again_after_s)
                                  for name, group in groups.items()))
    return any(told)


async def _read_group(model: RunModel, host: AcceleratorHost, group: list[Watched], again_after_s: float) -> bool:
    """``group``'s readings on ``host`` into ``model``; False when the host could not be read."""
    try:
        answers = await read_process_states_twice(host, [one.pid for one in group], again_after_s)
    except SourceError:
        return False
    _keep(model, host, group, answers, again_after_s)
    return True


async def _read_writers(model: RunModel, host: AcceleratorHost, log: str, again_after_s: float) -> bool:
    """The processes writing ``log`` on ``host``, found and read in one round trip, into
    ``model``; False when the host could not be read."""
    try:
        scan, answers = await read_log_writers(host, log, again_after_s)
    except SourceError:
        return False
    found = writer_processes(scan, answers[0].stats, host.name, MAX_WATCHED)
    before = model.processes.writers
    # Those found the last time and not now are read too: gone, most likely (the run died).
    left = [one for one in (before.found if before is not None else ()) if one.host == host.name
            and all(one.pid != now.pid for now in found)]
    model.processes.writers = LogWriters(host.name, time.time(), tuple(found))
    _keep(model, host, found + left, answers, again_after_s)
    return True


def _keep(model: RunModel, host: AcceleratorHost, group: list[Watched], answers: list[ProcAnswer],
          again_after_s: float) -> None:
    """``answers`` (one reading, or two ``again_after_s`` apart) of ``group`` on ``host`` into ``model``."""
    now = time.time()
    model.processes.py_spy[host.name] = answers[-1].py_spy
    for number, answer in enumerate(answers):
        at = now - again_after_s * (len(answers) - 1 - number)  # the first, a pause before the last
        for one in group:
            model.processes.add(ProcessReading(one, at, answer.uptime_s, answer.hz,
                                               answer.stats.get(one.pid), answer.wchans.get(one.pid)))
