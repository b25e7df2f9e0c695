"""``amd-smi`` with no arguments (ROCm 7): a two-row-per-GPU table and a process list.

Like nvidia-smi's table, read by its ``|`` cells and the ``/`` of each
used/total pair; values carry units (``79 °C``, ``103/300 W``, ``29777/32624
MB``) and the fan may print with or without ``%``.
"""

from __future__ import annotations

import re

from tui.parsers.smi.common import cells, integer, is_rule, number, text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample, SmiFormatError, with_processes

_PAIR = re.compile(r"(\S+?)\s*/\s*(\S+)\s*([A-Za-z]*)\s*$")
_TEMP = re.compile(r"(\S+)\s*°C")
_BUS = re.compile(r"([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)\s+(.*)")
_SIZE = re.compile(r"([\d.]+)\s*([KMGT]?B)")
_UNIT_MIB = {"B": 1 / 1024 ** 2, "KB": 1 / 1024, "MB": 1.0, "GB": 1024.0, "TB": 1024.0 ** 2}
# GPU PID Name GTT_MEM VRAM_MEM MEM_USAGE CU%; the name may hold spaces.
_PROCESS = re.compile(r"(\d+)\s+(\d+)\s+(.*?)\s+(\S+ [KMGT]?B)\s+(\S+ [KMGT]?B)\s+(\S+ [KMGT]?B)\s+\S+.*")


def _mib(text: str) -> float | None:
    match = _SIZE.fullmatch(text.strip())
    return float(match.group(1)) * _UNIT_MIB[match.group(2)] if match else None


def _gpu(first: list[str], second: list[str]) -> AcceleratorSample | None:
    head = _BUS.fullmatch(first[0])
    ids = second[0].split()
    index = integer(ids[0]) if ids else None
    power, memory = _PAIR.search(first[1]), _PAIR.search(second[1])
    temp = _TEMP.search(first[1])
    util = second[1].split()
    if head is None or index is None:
        return None
    return AcceleratorSample(
        host="", index=index, uuid=None, name=head.group(2).strip(),
        util_pct=number(util[0]) if util else None,
        mem_used_mib=number(memory.group(1)) if memory else None,
        mem_total_mib=number(memory.group(2)) if memory else None,
        temp_c=number(temp.group(1)) if temp else None,
        power_w=number(power.group(1)) if power else None,
        bus_id=head.group(1),
    )


def parse_amd_table(data: bytes | str, tool: str = "amd-smi") -> list[AcceleratorSample]:
    """The GPUs of the default table with their processes (VRAM held, in MiB).

    Raises ``SmiFormatError`` when no GPU row pair is found.
    """
    text = text_of(data)
    rows: list[list[str]] = []
    samples: list[AcceleratorSample] = []
    processes: list[AcceleratorProcess] = []
    in_processes = False
    for line in text.splitlines():
        if is_rule(line) or not line.lstrip().startswith("|"):
            rows.clear()
            continue
        row = cells(line)
        if row[0].startswith("Processes"):
            in_processes = True
        elif in_processes:
            match = _PROCESS.fullmatch(row[0])
            if match:
                processes.append(AcceleratorProcess(pid=int(match.group(2)), name=match.group(3),
                                                    mem_used_mib=_mib(match.group(5)),
                                                    device_index=int(match.group(1))))
        elif len(row) == 2:
            rows.append(row)
            if len(rows) == 2 and (sample := _gpu(*rows)) is not None:
                samples.append(sample)
    if not samples:
        raise SmiFormatError(explain(tool, text))
    return with_processes(samples, processes)
