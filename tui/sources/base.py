"""What every source offers the layers above it.

A source streams a log from a byte offset (``stream``), optionally keeps
following it as it grows, and reads any byte range again on demand
(``read_range``, for the step detail). Local files and SSH implement the same
calls, so everything above them is tested without a network.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from tui.parsers.records import JobRecord

if TYPE_CHECKING:
    from tui.sources.accelerators.hosts import AcceleratorHost
    from tui.sources.run_files import LoggerFiles


class SourceError(Exception):
    """A target that cannot be read; the message is one line a user can act on."""


@dataclass(frozen=True, slots=True)
class Data:
    """Bytes of the log starting at ``offset``; ``mtime`` is when the log was
    last written, where the source knows it (a stalled run is judged by it).

    ``mtime`` is on this machine's clock, and no earlier than the writing of
    these bytes: a remote source translates the box's clock (see
    ``tui.sources.ssh.box_clock``). None: they were written about when they
    arrived."""

    offset: int
    data: bytes
    mtime: float | None = None


@dataclass(frozen=True, slots=True)
class Lines:
    """Pre-filtered lines of ``[0, resume_at)``, each with its own offset.

    A remote source lets ``grep -b`` on the box pick out the lines the
    scanner wants instead of sending gigabytes of chatter; what follows is
    ordinary ``Data`` from ``resume_at``. ``mtime`` as for ``Data``: a backfill
    hands on old lines "now", and only the log's own modification time says
    how old the newest of them is.
    """

    lines: list[tuple[int, bytes]]
    resume_at: int
    mtime: float | None = None


@dataclass(frozen=True, slots=True)
class Reset:
    """The log was truncated or replaced: everything read so far is void."""

    reason: str


@dataclass(frozen=True, slots=True)
class Status:
    """A change in the source's health (connected, reconnecting…) for the header."""

    text: str
    ok: bool = True


@dataclass(frozen=True, slots=True)
class CaughtUp:
    """The source has delivered everything written so far and is waiting for more."""


@dataclass(frozen=True, slots=True)
class JobState:
    """The scheduler's word on the job behind the log (a Ray job's or a Slurm job's state),
    sent when it changes; a source for a plain file never sends one."""

    record: JobRecord


SourceEvent = Data | Lines | Reset | Status | CaughtUp | JobState


class LogSource(Protocol):
    """A followable, range-readable log."""

    @property
    def label(self) -> str:
        """How the UI names the log (a path, or host:path)."""
        ...

    async def connect(self) -> str | None:
        """Get ready to read (open, connect, find the log); raise SourceError if it cannot.

        Returns a line worth telling the user (which log was chosen), or None.
        Called once before ``stream``, so failures surface before a dashboard
        starts.
        """
        ...

    def stream(self, start: int, follow: bool) -> AsyncIterator[SourceEvent]:
        """Yield the log's bytes from ``start``; with ``follow``, keep waiting for more."""
        ...

    async def read_range(self, start: int, end: int) -> bytes:
        """The bytes in ``[start, end)``."""
        ...

    async def close(self) -> None:
        """Release connections and file handles."""
        ...

    @property
    def logger_files(self) -> LoggerFiles | None:
        """The JSONL and event files that are the run when it has no console log (then the
        source streams nothing); None when the log is the run's console."""
        ...

    def accelerator_host(self) -> AcceleratorHost:
        """The host whose GPUs/NPUs run this log's job, and how to run their tools there."""
        ...


@runtime_checkable
class JobSource(LogSource, Protocol):
    """A log that a scheduler runs as a job (a Ray job, a Slurm job).

    It sends ``JobState`` events, whose ``nodes`` are the hosts the job runs on;
    the session reads each node's accelerators through ``node_host``, which
    reaches the node the way the scheduler's own users do (through the Slurm
    login node or the Ray head as a jump host, where the source has one).
    """

    # Whether ``accelerator_host()`` is itself one of the job's nodes and read as such (a Ray
    # head, which ``nodes`` leaves out), or only the way in (a Slurm login node, never read).
    own_host_runs_job: bool

    async def node_host(self, node: str) -> AcceleratorHost:
        """The node ``node`` of the job, ready to run accelerator tools on (SourceError if it
        cannot be reached)."""
        ...


@runtime_checkable
class FileLog(LogSource, Protocol):
    """A log that is one file on its ``accelerator_host()`` (a local file, a box's file over
    SSH): where the log names no pid, its processes are found by who writes that file there."""

    @property
    def file_path(self) -> str:
        """The log's path on its host, as the host's own tools name it."""
        ...
