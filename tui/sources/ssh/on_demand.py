"""A host's accelerator tools over an SSH connection made when needed, and made again.

A Ray dashboard reached over plain HTTP (``ray+http://head:8265``) needs no SSH
for the job itself; only the head's GPUs do. Connecting lazily keeps a head
without SSH access from failing the target: the accelerator panel says why
instead, and the watcher's next retry connects again. The same runner keeps a
job's node or a ``--gpus`` host read after its connection drops (the node
rebooted, the jump host's connection was made again): the next reading
connects anew, through the jump host's connection of that moment.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing

import asyncssh

from tui.sources.accelerators.hosts import AcceleratorHost
from tui.sources.accelerators.runner import CommandFailed
from tui.sources.base import SourceError
from tui.sources.ssh.ssh_runner import SshRunner
from tui.sources.ssh.target import RemoteTarget


class OnDemandRunner:
    """``CommandRunner`` for ``target``'s host, connecting at its first command (and after
    a failed or lost connection, at the next one)."""

    def __init__(self, target: RemoteTarget, accept_new_host_key: bool = False,
                 via: Callable[[], asyncssh.SSHClientConnection] | None = None,
                 connection: asyncssh.SSHClientConnection | None = None) -> None:
        """``via``: the jump host's connection now (SourceError while it has none);
        ``connection``: one already open to the host, used until it closes."""
        self.target = target
        self._accept_new_host_key = accept_new_host_key
        self._via = via
        self._connection = connection
        self._lock = asyncio.Lock()

    async def _runner(self, argv: Sequence[str]) -> SshRunner:
        from tui.sources.ssh.connection import connect

        async with self._lock:
            if self._connection is None or self._connection.is_closed():
                try:
                    self._connection = await connect(self.target, self._accept_new_host_key,
                                                     self._via() if self._via else None)
                except SourceError as error:
                    raise CommandFailed(argv, None, b"", str(error)) from None
        connection = self._connection
        return SshRunner(lambda: connection, self.target.host)

    async def run(self, argv: Sequence[str], timeout: float = 30.0) -> bytes:
        return await (await self._runner(argv)).run(argv, timeout)

    async def stream_lines(self, argv: Sequence[str]) -> AsyncGenerator[bytes, None]:
        # aclosing: the remote program stops when our caller stops reading.
        async with aclosing((await self._runner(argv)).stream_lines(argv)) as lines:
            async for line in lines:
                yield line

    async def close(self) -> None:
        if self._connection is not None:
            self._connection.close()


def on_demand_host(host: str, accept_new_host_key: bool = False) -> tuple[AcceleratorHost, OnDemandRunner]:
    """``host`` (an ssh_config alias or a name) as an accelerator host that connects when first
    read, and its runner (to close)."""
    from tui.sources.ssh.target import parse_target

    runner = OnDemandRunner(parse_target(f"{host}:") or RemoteTarget(host, "."), accept_new_host_key)
    return AcceleratorHost(runner, host, False), runner
