"""One reading of a host's accelerators, for ``rlwatch check``."""

from __future__ import annotations

from dataclasses import dataclass

from tui.parsers.smi.records import AcceleratorSample, on_host
from tui.sources.accelerators.detect import detect, pollers_for, present
from tui.sources.accelerators.runner import CommandRunner


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one host showed: its devices, the tool that read them, or why none could."""

    host: str
    samples: list[AcceleratorSample]
    tool: str | None
    problem: str | None


async def take_snapshot(runner: CommandRunner, host: str, *, local: bool = False,
                        timeout: float = 30.0) -> Snapshot:
    """Detect the host's tool and take one reading (processes included). Never raises
    for the tool's sake: a host without readings gives ``samples=[]`` and ``problem``."""
    candidates = pollers_for(runner, local, timeout=timeout)
    if not local:
        candidates = await present(runner, candidates)
    poller, samples, problem = await detect(candidates)
    if poller is None:
        return Snapshot(host, [], None, problem)
    await poller.close()
    return Snapshot(host, on_host(samples, host), poller.tool, None)
