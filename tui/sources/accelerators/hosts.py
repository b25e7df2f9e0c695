"""Which host's accelerators belong to a run, and how to run their tools there.

The run's own host is where its log is, so each source says which
(``LogSource.accelerator_host``): this machine for a local log, the box
behind the log's SSH connection for a remote one (sharing that connection,
so reading the GPUs costs no second login). ``--gpus`` hosts
(the other nodes of a multi-node run) each get a connection of their own,
made again when it drops.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tui.sources.accelerators.runner import CommandRunner, LocalRunner


@dataclass(frozen=True, slots=True)
class AcceleratorHost:
    """A host to read accelerators on: how to run its tools, its name, and whether it is here
    (then NVML is tried before nvidia-smi)."""

    runner: CommandRunner
    name: str
    local: bool


def this_host() -> AcceleratorHost:
    """This machine, where NVML is tried before the smi tools."""
    return AcceleratorHost(LocalRunner(), socket.gethostname(), True)


async def other_host(host: str, accept_new_host_key: bool,
                     via: Callable[[], Any] | None = None) -> AcceleratorHost:
    """A ``--gpus`` host or a job's node, over a connection of its own (SourceError if it
    cannot be reached now), made again at the next reading once lost. ``via``: the asyncssh
    connection to reach it through now (a jump host's, replaced when it drops; typed
    loosely, as only the SSH source imports asyncssh)."""
    from tui.sources.ssh.connection import connect
    from tui.sources.ssh.on_demand import OnDemandRunner
    from tui.sources.ssh.target import RemoteTarget, parse_target

    target = parse_target(f"{host}:") or RemoteTarget(host, ".")
    connection = await connect(target, accept_new_host_key, via() if via else None)
    return AcceleratorHost(OnDemandRunner(target, accept_new_host_key, via, connection), host, False)
