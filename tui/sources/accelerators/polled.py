"""Tools without a streaming mode (npu-smi, rocm-smi): run, parse, wait, repeat."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence

from tui.parsers.smi.records import AcceleratorSample
from tui.sources.accelerators.runner import CommandRunner


class CommandPoller:
    """Runs ``argv`` every ``interval`` seconds and parses each output with ``parse``."""

    def __init__(self, runner: CommandRunner, tool: str, argv: Sequence[str],
                 parse: Callable[[bytes], list[AcceleratorSample]],
                 interval: float = 2.0, timeout: float = 30.0) -> None:
        self.runner = runner
        self.tool = tool
        self.argv = list(argv)
        self.parse = parse
        self.interval = interval
        self.timeout = timeout

    async def read_once(self) -> list[AcceleratorSample]:
        return self.parse(await self.runner.run(self.argv, self.timeout))

    async def follow(self) -> AsyncGenerator[list[AcceleratorSample], None]:
        while True:
            await asyncio.sleep(self.interval)
            yield await self.read_once()

    async def close(self) -> None:
        """Nothing stays open between polls."""
