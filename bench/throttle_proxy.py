"""A loopback TCP proxy that makes a slow link: a bandwidth cap and a one-way latency.

Used by the SSH benchmark to time rlwatch and its baseline through a 10 MB/s,
20 ms link. It listens on 127.0.0.1 only, forwards to one loopback port, and
stops with the event loop that runs it.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any


class ThrottleProxy:
    """``listen_port`` → 127.0.0.1:``target_port`` at ``rate`` bytes/s each way, ``delay`` s late."""

    def __init__(self, target_port: int, rate: float = 10e6, delay: float = 0.020) -> None:
        self.target_port = target_port
        self.rate = rate
        self.delay = delay
        self.bytes_to_client = 0
        self.server: asyncio.base_events.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _serve(self, client_reader, client_writer) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        await asyncio.gather(self._pipe(client_reader, upstream_writer, count=False),
                             self._pipe(upstream_reader, client_writer, count=True),
                             return_exceptions=True)

    async def _pipe(self, reader, writer, count: bool) -> None:
        loop = asyncio.get_running_loop()
        free_at = loop.time()
        try:
            while data := await reader.read(65536):
                if count:
                    self.bytes_to_client += len(data)
                free_at = max(free_at, loop.time()) + len(data) / self.rate
                await asyncio.sleep(max(0.0, free_at - loop.time()) + self.delay)
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()


async def box_and_slowbox(home: Any, server: Any) -> ThrottleProxy:
    """A started proxy to ``server`` (a tests.sshd.Sshd), and two aliases in ``home``'s ssh
    config (a tests.sshd.ClientHome), both trusted: ``box`` (the server itself) and
    ``slowbox`` (it through the proxy); this process's HOME is then ``home``, with no agent."""
    proxy = ThrottleProxy(server.port)
    proxy_port = await proxy.start()
    home.add_host("box", server.port)
    home.add_host("slowbox", proxy_port, extra="HostKeyAlias slowbox")
    home.trust(server.known_hosts_line())
    home.trust(f"slowbox {server.host_public_key}")
    os.environ["HOME"] = str(home.path)
    os.environ.pop("SSH_AUTH_SOCK", None)
    return proxy
