"""AMD GPUs through ``amd-smi``'s default table, polled, where ``rocm-smi`` is not installed.

ROCm 6.x deprecated ``rocm-smi`` in favour of ``amd-smi``, and hosts set up
with only the new tool exist (the corpus's ROCm 7.2 capture is one). Its
``metric --json`` output changes shape between releases and no complete
capture is at hand, so the default table, whose cells the grammar reads by
their ``|`` separators, is what is polled. rocm-smi is still tried first: its
JSON carries each card's unique id.
"""

from __future__ import annotations

from tui.parsers.smi.amd_smi_table import parse_amd_table
from tui.sources.accelerators.polled import CommandPoller
from tui.sources.accelerators.runner import CommandRunner

TOOL = "amd-smi"
ARGV = [TOOL]


def amd_smi_poller(runner: CommandRunner, interval: float = 2.0, timeout: float = 30.0) -> CommandPoller:
    """A poller for amd-smi on the runner's host."""
    return CommandPoller(runner, TOOL, ARGV, parse_amd_table, interval, timeout)
