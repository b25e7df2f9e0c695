"""nvidia-smi's default table (what ``nvidia-smi`` with no arguments prints).

Not what rlwatch polls (the query CSV is stable and cheaper), but the text
users paste and old boxes print, so it parses too: the 79-column layout of
R3xx–R4xx, the 89-column one of R535+, R610's ``KMD Version`` header, Windows'
``WDDM`` column, MIG blocks and the process list. Cells are found by the ``|``
separators, never by column positions, since each layout moves them.
"""

from __future__ import annotations

import re

from tui.parsers.smi.common import cells, integer, is_rule, number, pair, text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample, SmiFormatError, with_processes

# "0  NVIDIA H100 80GB HBM3   On" / "0  NVIDIA GeForce RTX 2080 ...  WDDM"
_GPU_FIRST = re.compile(r"(\d+)\s+(.*?)\s+(\S+)")
# GPU [GI CI] PID Type Name Memory; GI/CI are absent before R450.
_PROCESS = re.compile(r"(\d+)\s+(?:(\S+)\s+(\S+)\s+)?(\d+)\s+([A-Z+]+)\s+(.*?)\s+(\S+)")


def _gpu(first: list[str], second: list[str]) -> AcceleratorSample | None:
    """A GPU from the first two rows of its block (name row, readings row)."""
    head = _GPU_FIRST.fullmatch(first[0])
    if head is None or len(second) < 3:
        return None
    readings = second[0].split()  # Fan Temp Perf Pwr:Usage/Cap
    if len(readings) < 3:
        return None
    power, _cap = pair(" ".join(readings[3:]))
    used, total = pair(second[1])
    util = second[2].split()
    index = int(head.group(1))
    bus = first[1].split()
    return AcceleratorSample(
        host="", index=index, uuid=None, name=head.group(2),
        util_pct=number(util[0]) if util else None,
        mem_used_mib=used, mem_total_mib=total,
        temp_c=number(readings[1]), power_w=power,
        bus_id=bus[0] if bus else None,
    )


def _process(row: str) -> AcceleratorProcess | None:
    match = _PROCESS.fullmatch(row.strip())
    if match is None:
        return None
    gpu, _gi, _ci, pid, _kind, name, memory = match.groups()
    return AcceleratorProcess(pid=int(pid), name=name, mem_used_mib=number(memory),
                              device_index=int(gpu))


def parse_table(data: bytes | str, tool: str = "nvidia-smi") -> list[AcceleratorSample]:
    """The GPUs of a default table, each with its processes.

    The UUID is not in this table; devices are keyed by index. Raises
    ``SmiFormatError`` when no GPU row is found.
    """
    text = text_of(data)
    section = ""
    block: list[list[str]] = []
    samples: list[AcceleratorSample] = []
    processes: list[AcceleratorProcess] = []

    def close_block() -> None:
        if section == "gpus" and len(block) >= 2 and (sample := _gpu(block[0], block[1])):
            samples.append(sample)
        block.clear()

    for line in text.splitlines():
        if is_rule(line):
            close_block()
            continue
        row = cells(line)
        first = row[0] if row else ""
        if first.startswith("GPU  Name"):
            section = "gpus"
        elif first.startswith("MIG devices"):
            section = "mig"
        elif first.startswith("Processes"):
            section = "processes"
        elif section == "gpus" and len(row) >= 3:
            if integer(first.split()[0] if first else None) is not None or block:
                block.append(row)
        elif section == "processes" and (process := _process(first)) is not None:
            processes.append(process)
    close_block()
    if not samples:
        raise SmiFormatError(explain(tool, text))
    return with_processes(samples, processes)
