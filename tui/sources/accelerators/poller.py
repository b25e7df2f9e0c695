"""What each accelerator tool's poller offers, and what the watcher emits.

A poller knows one tool (NVML, nvidia-smi, npu-smi, rocm-smi). ``read_once``
takes one full reading (used to detect the tool and by ``check``); ``follow``
keeps reading until the tool fails. Failures are exceptions here (``ToolMissing``,
``CommandFailed``, ``SmiFormatError``, ``PollerError``); the watcher turns them
into one status line.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Protocol

from tui.parsers.smi.records import AcceleratorSample


class PollerError(Exception):
    """A tool that is present but unusable (a library that will not load, a stream that stopped)."""


class Poller(Protocol):
    """One tool on one host."""

    tool: str

    async def read_once(self) -> list[AcceleratorSample]:
        """Every device's reading now (processes attached where the tool lists them)."""
        ...

    def follow(self) -> AsyncGenerator[list[AcceleratorSample], None]:
        """Readings as they come (all devices, or one device per item for streams); endless
        until the tool fails, which raises."""
        ...

    async def close(self) -> None:
        """Release what ``read_once`` opened (a library handle); idempotent."""
        ...


@dataclass(frozen=True, slots=True)
class AcceleratorReadings:
    """New readings from ``host``, taken at ``at`` (seconds since the epoch)."""

    host: str
    samples: list[AcceleratorSample]
    at: float


@dataclass(frozen=True, slots=True)
class AcceleratorStatus:
    """The host's accelerator status changed: ``ok`` False means no readings for now."""

    host: str
    text: str
    ok: bool
    at: float


AcceleratorEvent = AcceleratorReadings | AcceleratorStatus
