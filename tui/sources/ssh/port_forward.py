"""A port on a remote host, reached as a port on this machine (``ssh -L``).

A Ray head usually serves its dashboard (the Jobs API) on ``127.0.0.1:8265`` of
the head alone; ``ray://head/JOB`` reaches it the way users do by hand
(``ssh -L 8265:127.0.0.1:8265 head``): one SSH connection, made like every
other (config, agent, known_hosts), or the one a fleet's pool holds to the head
(shared by its runs), with a local listener on a free port of 127.0.0.1 whose
connections asyncssh carries to the port on the head. The same connection runs
the head's accelerator tools and is the jump host to the cluster's other nodes.
Nothing is started on the head.
"""

from __future__ import annotations

import asyncssh

from tui.sources.base import SourceError
from tui.sources.ssh.target import RemoteTarget


class Forward:
    """An open SSH connection to ``target`` with 127.0.0.1:``port`` here forwarded to
    127.0.0.1:``remote_port`` there."""

    def __init__(self, target: RemoteTarget, connection: asyncssh.SSHClientConnection,
                 listener: asyncssh.SSHListener, remote_port: int, owns_connection: bool = True) -> None:
        self.target = target
        self.connection = connection
        self._listener = listener
        self.remote_port = remote_port
        self._owns_connection = owns_connection  # else the pool's, which closes it

    @property
    def port(self) -> int:
        """The local port that leads to the remote one."""
        return self._listener.get_port()

    async def close(self) -> None:
        self._listener.close()
        if self._owns_connection:
            self.connection.close()
            await self.connection.wait_closed()


async def forward(target: RemoteTarget, remote_port: int, accept_new_host_key: bool = False,
                  connection: asyncssh.SSHClientConnection | None = None) -> Forward:
    """Connect to ``target``'s host (or use ``connection``, an open one to it that closing
    the forward leaves open) and forward a free local port to ``remote_port`` on its
    loopback (SourceError with what to do when either fails)."""
    from tui.sources.ssh.connection import connect

    owned = connection is None
    if connection is None:
        connection = await connect(target, accept_new_host_key)
    try:
        listener = await connection.forward_local_port("127.0.0.1", 0, "127.0.0.1", remote_port)
    except (OSError, asyncssh.Error) as error:
        if owned:
            connection.close()
        reason = getattr(error, "reason", None) or getattr(error, "strerror", None) or str(error)
        raise SourceError(f"{target.host}: cannot forward a local port to its port {remote_port}: "
                          f"{reason}") from None
    return Forward(target, connection, listener, remote_port, owned)
