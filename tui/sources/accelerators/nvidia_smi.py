"""NVIDIA GPUs through nvidia-smi: one long-lived ``--query-gpu … -l N`` stream.

Starting nvidia-smi costs more than the query (it initialises NVML each time,
a second or more on big boxes), so the readings come from one process that
prints a row per GPU every ``interval`` seconds; processes come from
``--query-compute-apps`` at a slower pace, run beside the stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from tui.parsers.smi.failures import explain
from tui.parsers.smi.nvidia_query_csv import (
    APP_FIELDS,
    GPU_FIELDS,
    gpu_sample,
    parse_compute_apps,
    parse_gpus,
)
from tui.parsers.smi.records import (
    AcceleratorProcess,
    AcceleratorSample,
    SmiFormatError,
    with_processes,
)
from tui.sources.accelerators.runner import CommandFailed, CommandRunner, ToolMissing

TOOL = "nvidia-smi"
_QUERY = [TOOL, "--query-gpu=" + ",".join(GPU_FIELDS), "--format=csv,noheader,nounits"]
_APPS = [TOOL, "--query-compute-apps=" + ",".join(APP_FIELDS), "--format=csv,noheader,nounits"]
# This many lines in a row that are not GPU rows mean the stream prints errors, not readings.
_JUNK_LIMIT = 20


def stream_argv(interval: float) -> list[str]:
    """The looping query; ``-l`` takes whole seconds, at least one."""
    return _QUERY + ["-l", str(max(1, round(interval)))]


class NvidiaSmiPoller:
    """nvidia-smi on one host, through ``runner``."""

    tool = TOOL

    def __init__(self, runner: CommandRunner, interval: float = 2.0, process_interval: float = 10.0,
                 timeout: float = 30.0) -> None:
        self.runner = runner
        self.interval = interval
        self.process_interval = process_interval
        self.timeout = timeout
        self._processes: list[AcceleratorProcess] = []

    async def _read_processes(self) -> list[AcceleratorProcess]:
        """The compute processes; a failure here keeps the last list (they are a detail)."""
        try:
            self._processes = parse_compute_apps(await self.runner.run(_APPS, self.timeout))
        except (CommandFailed, SmiFormatError, ToolMissing):
            pass
        return self._processes

    async def read_once(self) -> list[AcceleratorSample]:
        """The GPUs and their processes, both queries at once: each starts nvidia-smi (NVML's
        initialisation, a second or more on a big box) and, over SSH, a login shell, so a
        remote ``check`` waited for two of each in turn."""
        apps = asyncio.ensure_future(self._read_processes())
        try:
            samples = parse_gpus(await self.runner.run(_QUERY, self.timeout))
        except BaseException:
            apps.cancel()  # and wait for it: its nvidia-smi is reaped before we return
            await asyncio.gather(apps, return_exceptions=True)
            raise
        return with_processes(samples, await apps)

    async def _poll_processes(self) -> None:
        while True:
            await asyncio.sleep(self.process_interval)
            await self._read_processes()

    async def follow(self) -> AsyncGenerator[list[AcceleratorSample], None]:
        """One item per GPU row as nvidia-smi prints it."""
        poll = asyncio.create_task(self._poll_processes())
        junk: list[bytes] = []
        lines = self.runner.stream_lines(stream_argv(self.interval))
        try:
            async for line in lines:
                sample = gpu_sample(line.decode("utf-8", errors="replace"))
                if sample is None:
                    junk = (junk + [line])[-_JUNK_LIMIT:]
                    if len(junk) == _JUNK_LIMIT:
                        raise SmiFormatError(explain(TOOL, b"\n".join(junk)))
                    continue
                junk = []
                yield with_processes([sample], self._processes)
        finally:
            poll.cancel()
            await asyncio.gather(poll, return_exceptions=True)
            await lines.aclose()
        raise SmiFormatError(f"{TOOL}: the -l stream ended")

    async def close(self) -> None:
        """Nothing to release: the stream's process ends with ``follow``."""
