"""Reading a run's processes on their hosts into its model: what a session does while the run
looks stuck, and ``rlwatch status`` once for a stalled run.

Which processes: :func:`tui.model.processes.watched_processes` (the log's own, read on the
log's host, and the devices' holders on the hosts whose devices listed them); each host is
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
from tui.sources.base import SourceError
from tui.sources.process_states import read_process_states


async def read_processes(model: RunModel, accelerators: AcceleratorHistory, log_host: AcceleratorHost,
                         hosts: Mapping[str, AcceleratorHost]) -> bool:
    """One reading of ``model``'s processes into ``model.processes``, ``hosts`` the hosts whose
    devices are read (by name) beside ``log_host``; True when any host answered."""
    reachable = {log_host.name: log_host, **hosts}
    groups: dict[str, list[Watched]] = {}
    for watched in watched_processes(model.steps_pid, log_host.name, accelerators):
        groups.setdefault(watched.host, []).append(watched)
    answered = False
    for name, group in groups.items():
        host = reachable.get(name)
        if host is None:
            continue
        try:
            answer = await read_process_states(host, [watched.pid for watched in group])
        except SourceError:
            continue
        at, answered = time.time(), True
        model.processes.py_spy[name] = answer.py_spy
        for watched in group:
            model.processes.add(ProcessReading(watched, at, answer.uptime_s, answer.hz,
                                               answer.stats.get(watched.pid), answer.wchans.get(watched.pid)))
    return answered
