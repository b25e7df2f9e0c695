"""One SSH connection per host, shared by every run of a fleet on that host.

A fleet of twenty runs on five boxes makes five logins, not twenty: each
``RemoteLog`` given a pool asks it for its host's connection instead of
opening its own, and when that connection drops, the first run to notice
asks for a new one and the others wait for the same attempt (``replace``).

A host that is down costs one attempt per pause, not one per run: a failure is
remembered for the reconnect back-off's pause after that many failures in a row
(``connection.reconnect_delay``: a second, doubling to a cap; or a fixed
``retry_s`` where the caller gives one), and
every run of the host that asks meanwhile gets the same error at once; a host
back from a reboot is rejoined within that pause. The other hosts' runs never
wait on it.

OpenSSH's sshd allows ten channels per connection (``MaxSessions``), and a
followed run holds one for its ``tail`` plus short ones for range reads and
the accelerator tools; so a host's runs are spread over as many connections
as ``RUNS_PER_CONNECTION`` needs (four runs: one connection; five: two).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass

import asyncssh

from tui.sources.base import SourceError
from tui.sources.ssh.target import RemoteTarget

# Runs per connection: each holds a channel for its tail (two with a JSONL beside it) and
# opens short ones, and an sshd left at its default refuses an eleventh on one connection.
RUNS_PER_CONNECTION = 4


@dataclass(frozen=True, slots=True)
class Seat:
    """Which shared connection a run uses: its host as typed (user, port) and which of that
    host's connections (a host with more than RUNS_PER_CONNECTION runs has several)."""

    host: str
    user: str | None
    port: int | None
    index: int


class ConnectionPool:
    """The open connections of a fleet, one per host (per RUNS_PER_CONNECTION runs)."""

    def __init__(self, accept_new_host_key: bool = False, retry_s: float | None = None) -> None:
        self.accept_new_host_key = accept_new_host_key
        self.retry_s = retry_s
        self._runs: dict[tuple[str, str | None, int | None], int] = {}
        self._live: dict[Seat, asyncssh.SSHClientConnection] = {}
        self._pending: dict[Seat, asyncio.Task[asyncssh.SSHClientConnection]] = {}
        self._failed: dict[Seat, tuple[float, SourceError]] = {}
        self._failures: dict[Seat, int] = {}  # failed logins in a row
        self._seen: set[Seat] = set()  # seats that had a login, answered or refused
        # Logins made, counted for the tests and the bench ("one per host").
        self.logins = 0

    def seat(self, target: RemoteTarget) -> Seat:
        """A place for one more run of ``target``'s host (the same connection as the host's
        other runs until that one holds RUNS_PER_CONNECTION)."""
        host = (target.host, target.user, target.port)
        runs = self._runs.get(host, 0)
        self._runs[host] = runs + 1
        return Seat(*host, runs // RUNS_PER_CONNECTION)

    async def get(self, seat: Seat) -> asyncssh.SSHClientConnection:
        """The seat's open connection: the live one, the attempt under way, or a new attempt
        (SourceError, the same for every run of the host, while a failure is fresh)."""
        live = self._live.get(seat)
        if live is not None and not live.is_closed():
            return live
        failed = self._failed.get(seat)
        if failed is not None and time.monotonic() - failed[0] < self._pause(seat):
            raise failed[1]
        attempt = self._pending.get(seat)
        if attempt is None:
            attempt = asyncio.get_running_loop().create_task(self._login(seat))
            self._pending[seat] = attempt
        # Shielded: one run giving up (cancelled) must not cancel the others' attempt.
        return await asyncio.shield(attempt)

    def _pause(self, seat: Seat) -> float:
        from tui.sources.ssh.connection import Refused, reconnect_delay

        if self.retry_s is not None:
            return self.retry_s
        failed = self._failed.get(seat)
        return reconnect_delay(self._failures.get(seat, 0), failed is not None and isinstance(failed[1], Refused))

    async def first(self, target: RemoteTarget) -> asyncssh.SSHClientConnection:
        """The host's first connection, for a command that is no run of its own (a glob)."""
        return await self.get(Seat(target.host, target.user, target.port, 0))

    def trouble(self, target: RemoteTarget) -> str | None:
        """What is wrong with ``target``'s host now, for its rows: the last login's failure,
        or a connection that dropped and is not back; None while every connection of the host
        is up (or its first login is still under way)."""
        host = (target.host, target.user, target.port)
        for seat in self._seen:
            if (seat.host, seat.user, seat.port) != host:
                continue
            live = self._live.get(seat)
            if live is not None and not live.is_closed():
                continue
            if seat in self._failed:
                return str(self._failed[seat][1])
            return f"{seat.host}: connection lost; reconnecting"
        return None

    async def replace(self, seat: Seat, dead: asyncssh.SSHClientConnection | None
                      ) -> asyncssh.SSHClientConnection:
        """A connection in place of ``dead``, which dropped: the first run to ask starts the
        new login, the others get the same one."""
        if dead is not None and self._live.get(seat) is dead:
            del self._live[seat]
            dead.close()
        return await self.get(seat)

    async def _login(self, seat: Seat) -> asyncssh.SSHClientConnection:
        from tui.sources.ssh.connection import connect

        try:
            self.logins += 1
            connection = await connect(RemoteTarget(seat.host, ".", seat.user, seat.port),
                                       self.accept_new_host_key)
        except SourceError as error:
            self._failed[seat] = (time.monotonic(), error)
            self._failures[seat] = self._failures.get(seat, 0) + 1
            raise
        finally:
            self._pending.pop(seat, None)
            self._seen.add(seat)
        self._failed.pop(seat, None)
        self._failures.pop(seat, None)
        self._live[seat] = connection
        return connection

    async def close(self) -> None:
        """Close every connection (the fleet is done) and stop the logins under way."""
        for attempt in self._pending.values():
            attempt.cancel()
        for connection in self._live.values():
            connection.close()
        for connection in self._live.values():
            with contextlib.suppress(Exception):  # a dead connection closes as it can
                await connection.wait_closed()
        self._live.clear()
