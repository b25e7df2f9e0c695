"""A loopback TCP proxy that makes a slow link: a bandwidth cap and a one-way latency.

Used by the SSH benchmark to time rlwatch and its baseline through a 10 MB/s,
20 ms link. It listens on 127.0.0.1 only, forwards to one loopback port, and
stops with the event loop that runs it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

# The two ways to the loopback box that ``loopback_boxes`` sets up: its alias and how it is said.
LINKS = (("box", "loopback"), ("slowbox", "through 10 MB/s + 20 ms"))


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


@asynccontextmanager
async def loopback_boxes(prefix: str) -> AsyncIterator[None]:
    """A loopback sshd in a fresh folder named ``prefix…``, reached as ``box`` and, through a
    ``ThrottleProxy``, as ``slowbox`` (``box_and_slowbox``); both stopped after the block."""
    from tests.sshd import ClientHome, Sshd

    root = Path(tempfile.mkdtemp(prefix=prefix))
    home = ClientHome(root / "home")
    server = Sshd(root / "sshd", [home.public_key]).start()
    proxy = await box_and_slowbox(home, server)
    try:
        yield
    finally:
        await proxy.stop()
        server.stop()


def run_on_loopback_boxes(measure: Callable[[int], Awaitable[Any]], doc: str | None) -> None:
    """A loopback-box benchmark's command line: ``--tries N`` (15) alternating pairs, its rows
    (``bench.table.Row``) measured and printed."""
    from bench.table import print_table

    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--tries", type=int, default=15)
    print_table(asyncio.run(measure(parser.parse_args().tries)), "loopback sshd on this machine")
