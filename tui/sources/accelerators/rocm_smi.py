"""AMD GPUs through ``rocm-smi --json``, polled.

Only the flags whose JSON keys ``parsers/smi/rocm_smi_json.py`` reads are
asked for, which keeps each run short.
"""

from __future__ import annotations

from tui.parsers.smi.rocm_smi_json import parse_rocm_json
from tui.sources.accelerators.polled import CommandPoller
from tui.sources.accelerators.runner import CommandRunner

TOOL = "rocm-smi"
ARGV = [TOOL, "--showuse", "--showmeminfo", "vram", "--showtemp", "--showpower",
        "--showproductname", "--showuniqueid", "--showbus", "--json"]


def rocm_smi_poller(runner: CommandRunner, interval: float = 2.0, timeout: float = 30.0) -> CommandPoller:
    """A poller for rocm-smi on the runner's host."""
    return CommandPoller(runner, TOOL, ARGV, parse_rocm_json, interval, timeout)
