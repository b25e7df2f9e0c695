"""Keeping an AcceleratorHistory fed from one host's tool, beside the log feed.

The run's own host is read where the log is read: NVML or nvidia-smi here for
a local log, over the log's SSH connection for a remote one. ``--gpus`` hosts
(the other nodes of a multi-node run) each get a connection of their own.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from contextlib import aclosing

from tui.model.accelerators import AcceleratorHistory
from tui.sources.accelerators.poller import AcceleratorReadings
from tui.sources.accelerators.runner import CommandRunner, LocalRunner
from tui.sources.accelerators.watch import watch_accelerators
from tui.sources.base import LogSource


async def feed_accelerators(runner: CommandRunner, host: str, local: bool,
                            history: AcceleratorHistory, on_change: Callable[[], None]) -> None:
    """Fold one host's readings and status into ``history`` until cancelled."""
    async with aclosing(watch_accelerators(runner, host, local=local)) as events:
        async for event in events:
            if isinstance(event, AcceleratorReadings):
                history.add(event.samples, event.at)
            else:
                history.set_status(event.host, event.text, event.ok, event.at)
            on_change()


def runner_for_source(source: LogSource) -> tuple[CommandRunner, str, bool]:
    """The runner, host name and locality for the host that holds ``source``'s log."""
    connection = getattr(source, "connection", None)
    if connection is not None:
        from tui.sources.ssh.ssh_runner import SshRunner

        return SshRunner(connection), source.target.host, False
    return LocalRunner(), socket.gethostname(), True


async def runner_for_host(host: str, accept_new_host_key: bool) -> CommandRunner:
    """A runner on another node (``--gpus host``), over a connection of its own."""
    from tui.sources.ssh.connection import connect
    from tui.sources.ssh.ssh_runner import SshRunner
    from tui.sources.ssh.target import RemoteTarget, parse_target

    target = parse_target(f"{host}:") or RemoteTarget(host, ".")
    return SshRunner(await connect(target, accept_new_host_key))

