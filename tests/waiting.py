"""Waiting, in async tests, for something another task does (bounded: a hang fails, it never stalls)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def until(condition: Callable[[], object], timeout: float = 5.0) -> float:
    """Poll ``condition`` until it is true; return how long that took."""
    start = time.monotonic()

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)
    return time.monotonic() - start
