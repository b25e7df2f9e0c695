"""Reading a run's processes on their hosts into its model: what a session does while the run
looks stuck, and ``rlwatch status`` once for a stalled run.

Which processes: :func:`tui.model.processes.watched_processes` (the log's own, read on the
log's host unless a scheduler runs the job elsewhere, and the devices' holders on the hosts whose
devices listed them); each host is
asked about all of its pids in one round trip (:mod:`tui.sources.process_states`). A host
that cannot be read now is left for the next time: its processes keep their last readings.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from tui.model.accelerators import AcceleratorHistory
from tui.model.processes import ProcessReading, Watched, watched_processes
from tui.model.run_model import RunModel
from tui.sources.accelerators.hosts import AcceleratorHost
from tui.sources.base import JobSource, LogSource, SourceError
from tui.sources.process_states import read_process_states


def log_host(source: LogSource) -> AcceleratorHost | None:
    """Where the pid the log names lives: the log's own host, unless a scheduler runs the job
    elsewhere (a Slurm login node is only the way in: a pid read there is another's)."""
    if isinstance(source, JobSource) and not source.own_host_runs_job:
        return None
    return source.accelerator_host()


def reachable_processes(model: RunModel, accelerators: AcceleratorHistory, here: AcceleratorHost | None,
                  hosts: Mapping[str, AcceleratorHost]) -> tuple[list[Watched], dict[str, AcceleratorHost]]:
    """The run's processes worth reading that are on a host rlwatch can reach, and those hosts
    by name: ``here`` the log's pid's host (``log_host``), ``hosts`` those whose devices are read."""
    reachable = {**hosts, **({here.name: here} if here is not None else {})}
    watched = watched_processes(model.steps_pid if here is not None else None,
                                here.name if here is not None else "", accelerators)
    return [w for w in watched if w.host in reachable], reachable


async def read_processes(model: RunModel, accelerators: AcceleratorHistory, here: AcceleratorHost | None,
                         hosts: Mapping[str, AcceleratorHost]) -> bool:
    """One reading of ``model``'s processes into ``model.processes`` (``reachable_processes``); True
    when any host answered."""
    watched, reachable = reachable_processes(model, accelerators, here, hosts)
    groups: dict[str, list[Watched]] = {}
    for one in watched:
        groups.setdefault(one.host, []).append(one)
    answered = False
    for name, group in groups.items():
        try:
            answer = await read_process_states(reachable[name], [one.pid for one in group])
        except SourceError:
            continue
        at, answered = time.time(), True
        model.processes.py_spy[name] = answer.py_spy
        for one in group:
            model.processes.add(ProcessReading(one, at, answer.uptime_s, answer.hz,
                                               answer.stats.get(one.pid), answer.wchans.get(one.pid)))
    return answered
