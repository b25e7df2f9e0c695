"""Which accelerator tool a host has: try each in turn, keep the first that reads.

Order: NVML (local only, cheapest), nvidia-smi, npu-smi, rocm-smi, amd-smi. A tool that
is missing is skipped silently; one that is present but fails (no devices, a
driver/library mismatch, a field the driver lacks) is remembered, and its
reason becomes the status line if no other tool reads.
"""

from __future__ import annotations

from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import AcceleratorSample, SmiFormatError
from tui.sources.accelerators.amd_smi import amd_smi_poller
from tui.sources.accelerators.npu_smi import NpuSmiPoller
from tui.sources.accelerators.nvidia_smi import NvidiaSmiPoller
from tui.sources.accelerators.nvml import NvmlPoller
from tui.sources.accelerators.poller import Poller, PollerError
from tui.sources.accelerators.rocm_smi import rocm_smi_poller
from tui.sources.accelerators.runner import CommandFailed, CommandRunner, ToolMissing

NONE_FOUND = "no accelerator tool found (looked for nvidia-smi, npu-smi, rocm-smi, amd-smi)"


def pollers_for(runner: CommandRunner, local: bool, interval: float = 2.0,
                timeout: float = 30.0) -> list[Poller]:
    """The candidate pollers for a host, in the order they are tried."""
    candidates: list[Poller] = [NvmlPoller(interval)] if local else []
    return candidates + [NvidiaSmiPoller(runner, interval, timeout=timeout),
                         NpuSmiPoller(runner, interval, timeout=timeout),
                         rocm_smi_poller(runner, interval, timeout),
                         amd_smi_poller(runner, interval, timeout)]


# Prints the names of the given tools that are on PATH; run by a POSIX sh whatever the login
# shell is, the tool names passed as arguments (nothing is built from text).
_WHICH = 'for tool do command -v "$tool" >/dev/null 2>&1 && echo "$tool"; done; exit 0'


def probe_argv(tools: list[str]) -> list[str]:
    """The command that prints which of ``tools`` a host has (``present``); a remote log's
    backfill asks it beside the log, and its answer then costs no channel of its own."""
    return ["sh", "-c", _WHICH, "sh", *tools]


async def present(runner: CommandRunner, candidates: list[Poller]) -> list[Poller]:
    """The candidates whose tool the host has, asked in one round trip.

    Trying each tool in turn costs a round trip apiece over SSH: on a box without
    GPUs (a login node, a CPU run) four misses added about a second to ``check``.
    Where no POSIX ``sh`` answers, every candidate is kept and tried as before."""
    try:
        said = await runner.run(probe_argv([p.tool for p in candidates]), timeout=15.0)
    except (ToolMissing, CommandFailed):
        return candidates
    found = set(said.decode(errors="replace").split())
    return [poller for poller in candidates if poller.tool in found]


def describe(tool: str, error: BaseException) -> str:
    """One status line for a poller's failure."""
    if isinstance(error, CommandFailed):
        return explain(tool, error.output, error.returncode) if error.output.strip() else f"{tool}: {error}"
    if isinstance(error, (SmiFormatError, PollerError)):
        return str(error)
    return f"{tool}: unexpected {type(error).__name__}: {error}"


async def detect(candidates: list[Poller]) -> tuple[Poller | None, list[AcceleratorSample], str | None]:
    """(the first poller that reads, its first reading, None), or (None, [], why not)."""
    problems: list[str] = []
    for poller in candidates:
        try:
            return poller, await poller.read_once(), None
        except ToolMissing:
            pass
        except Exception as error:  # a failing tool must not stop the others being tried
            problems.append(describe(poller.tool, error))
        await poller.close()
    return None, [], problems[0] if problems else NONE_FOUND
