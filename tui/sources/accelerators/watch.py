"""Keep reading one host's accelerators for the dashboard, whatever happens.

The watcher finds the host's tool, streams its readings, and when the tool
fails or is absent it says so ONCE (a status line, not a log of errors) and
tries again later: every ``retry_s`` after a failure, every
``absent_retry_s`` when no tool is there at all. It never raises for the
tool's sake; the dashboard stops it by cancelling its task.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing

from tui.parsers.smi.records import on_host
from tui.sources.accelerators.detect import NONE_FOUND, describe, detect, pollers_for, present
from tui.sources.accelerators.poller import (
    AcceleratorEvent,
    AcceleratorReadings,
    AcceleratorStatus,
    Poller,
)
from tui.sources.accelerators.runner import CommandRunner


async def watch_accelerators(
    runner: CommandRunner, host: str, *, local: bool = False, interval: float = 2.0,
    retry_s: float = 30.0, absent_retry_s: float = 300.0,
    candidates: Callable[[], list[Poller]] | None = None,
    clock: Callable[[], float] = time.time,
) -> AsyncGenerator[AcceleratorEvent, None]:
    """Events for ``host``: readings as they come, and a status whenever it changes.

    ``candidates`` replaces the default tool list (``pollers_for``), for tests
    and for hosts where the user named the tool.
    """
    last: tuple[str, bool] | None = None

    def changed(text: str, ok: bool) -> AcceleratorStatus | None:
        nonlocal last
        if last == (text, ok):
            return None
        last = (text, ok)
        return AcceleratorStatus(host, text, ok, clock())

    while True:
        tried = candidates() if candidates else pollers_for(runner, local, interval)
        if not local and not candidates:
            tried = await present(runner, tried)
        poller, samples, problem = await detect(tried)
        if poller is None:
            if event := changed(problem or NONE_FOUND, False):
                yield event
            await asyncio.sleep(absent_retry_s if problem == NONE_FOUND else retry_s)
            continue
        try:
            if event := changed(f"{poller.tool}: {len(samples)} device(s)", True):
                yield event
            yield AcceleratorReadings(host, on_host(samples, host), clock())
            async with aclosing(poller.follow()) as readings:  # its program stops with us
                async for samples in readings:
                    yield AcceleratorReadings(host, on_host(samples, host), clock())
            problem = f"{poller.tool}: stopped"
        except Exception as error:  # never crash the dashboard: a failure becomes the status line
            problem = describe(poller.tool, error)
        finally:
            await poller.close()
        if event := changed(problem, False):
            yield event
        await asyncio.sleep(retry_s)
