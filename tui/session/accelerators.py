"""Keeping an AcceleratorHistory fed from one host's tool, beside the log feed."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import aclosing

from tui.model.accelerators import AcceleratorHistory
from tui.sources.accelerators.hosts import AcceleratorHost
from tui.sources.accelerators.poller import AcceleratorReadings
from tui.sources.accelerators.watch import watch_accelerators


async def feed_accelerators(host: AcceleratorHost, history: AcceleratorHistory,
                            on_change: Callable[[], None]) -> None:
    """Fold one host's readings and status into ``history`` until cancelled."""
    async with aclosing(watch_accelerators(host.runner, host.name, local=host.local)) as events:
        async for event in events:
            if isinstance(event, AcceleratorReadings):
                history.add(event.samples, event.at)
            else:
                history.set_status(event.host, event.text, event.ok, event.at)
            on_change()
