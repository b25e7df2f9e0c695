"""Many watched runs at once: a fleet is a list of sessions, one per row.

Each ``FleetRun`` is a session and what the row needs besides it: the run's
short name, its host, and, while it cannot be read (a host that is down, a
path that is not there yet), why. Unlike the one-run dashboard, which
refuses to start on a target it cannot read, a fleet starts on every run at
once and keeps trying the ones that fail: one dead host must never keep the
others from showing, and a host that comes back joins without a restart.

Sessions are made by a callable the command line supplies (``open``), so this
layer knows nothing of how targets are written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Literal

from tui.session.run_session import RunChanged, RunSession
from tui.sources.base import SourceError

# Seconds between attempts on a run that cannot be read (a down host costs one login per
# attempt; the SSH pool makes it one per host, whatever its number of runs).
RETRY_S = (2.0, 5.0, 10.0, 30.0)

# Whether a run can be read: not tried yet, open (its session connected), or not now.
Reach = Literal["opening", "open", "unreachable"]


class FleetRun:
    """One row of a fleet: a run's name, host and session, and whether it can be read now."""

    def __init__(self, name: str, host: str, open: Callable[[], RunSession],
                 host_trouble: Callable[[], str | None] = lambda: None,
                 retry_s: tuple[float, ...] = RETRY_S,
                 expand: Callable[[], Awaitable[list[FleetRun]]] | None = None, where: str = "") -> None:
        """``open`` makes the run's session (SourceError when its target is not readable,
        say a local path that is not there); it is called again until it succeeds.
        ``host_trouble``: what is wrong with the run's host now (its connection lost, its
        last login refused), shared by the host's runs; None when it is well. ``expand``:
        this row is a glob whose box could not be asked; it is asked again until it answers,
        and the row is then ``replaced_by`` the runs the glob matches. ``where``: the run's
        target in full (``host:/path``, a path, a job's address), which two runs of one name
        on one host (``/a/exp/train.log``, ``/b/exp/train.log``: both ``exp/train``) differ by."""
        self.name = name
        self.host = host
        self.where = where or name
        self._open = open
        self._host_trouble = host_trouble
        self._retry_s = retry_s
        self.session: RunSession | None = None
        self.reach: Reach = "opening"
        self._failure: str | None = None  # why the last attempt to open failed
        self.note: str | None = None
        self._expand = expand
        self.replaced_by: list[FleetRun] | None = None
        self._listeners: list[Callable[[FleetRun, RunChanged], None]] = []

    def listen(self, listener: Callable[[FleetRun, RunChanged], None]) -> None:
        """Call ``listener`` with this run and each change of its session or its reach."""
        self._listeners.append(listener)

    @property
    def problem(self) -> str | None:
        """Why the run cannot be read now (its target, or its host), or None."""
        if self.reach == "unreachable":
            return self._failure
        return self._host_trouble() if self.reach == "open" else None

    def _tell(self, change: RunChanged) -> None:
        for listener in self._listeners:
            listener(self, change)

    async def open(self) -> bool:
        """One attempt at making and connecting the session; whether the run can be read."""
        try:
            if self.session is None:
                self.session = self._open()
                self.session.listen(self._tell)
            self.note = await self.session.connect()
        except SourceError as error:
            return self._failed(error)
        self.reach, self._failure = "open", None
        self._tell(RunChanged(model=True))
        return True

    async def watch(self) -> None:
        """Open the run, trying again with growing pauses until it opens, then follow it
        until cancelled (a glob's row: expand it, then leave the following to its runs)."""
        attempt = 0
        while not await (self._expanded() if self._expand is not None else self.open()):
            await asyncio.sleep(self._retry_s[min(attempt, len(self._retry_s) - 1)])
            attempt += 1
        if self.session is not None:
            await self.session.follow()

    async def _expanded(self) -> bool:
        """One attempt at expanding this row's glob; whether it is now its runs."""
        assert self._expand is not None
        try:
            self.replaced_by = await self._expand()
        except SourceError as error:
            return self._failed(error)
        self._tell(RunChanged(model=True))
        return True

    def _failed(self, error: SourceError) -> bool:
        """Say why this attempt failed (the row shows it until the next succeeds)."""
        self.reach, self._failure = "unreachable", str(error)
        self._tell(RunChanged())
        return False

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
