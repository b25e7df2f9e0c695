"""``nvidia-smi -q``: the full report as indented ``Label : value`` text.

Each GPU starts with an unindented ``GPU 00000000:00:09.0`` line; sections
nest by indentation. A reading is found by its path of labels, so the MIG
devices' own ``Shared FB Memory Usage`` never stands in for the GPU's.
"""

from __future__ import annotations

import re

from tui.parsers.smi.common import integer, is_unknown, number, text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample, SmiFormatError

_GPU = re.compile(r"GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*")
_ITEM = re.compile(r"(\s*)(.*?)\s*(?::\s?(.*))?")
# Label paths per reading, newest driver first.
_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "name": (("Product Name",),),
    "uuid": (("GPU UUID",),),
    "util": (("Utilization", "GPU"), ("Utilization", "Gpu")),
    "used": (("FB Memory Usage", "Used"),),
    "total": (("FB Memory Usage", "Total"),),
    "temp": (("Temperature", "GPU Current Temp"), ("Temperature", "GPU Current Temperature")),
    "power": (("GPU Power Readings", "Power Draw"), ("GPU Power Readings", "Average Power Draw"),
              ("GPU Power Readings", "Instantaneous Power Draw"), ("Power Readings", "Power Draw")),
}


class _Gpu:
    """The labelled values and processes of one GPU section."""

    def __init__(self, bus_id: str) -> None:
        self.bus_id = bus_id
        self.values: dict[tuple[str, ...], str] = {}
        self.processes: list[dict[str, str]] = []

    def first(self, reading: str) -> str | None:
        return next((self.values[path] for path in _PATHS[reading] if path in self.values), None)


def _sections(text: str) -> list[_Gpu]:
    gpus: list[_Gpu] = []
    stack: list[tuple[int, str]] = []  # (indent, section label)
    for line in text.splitlines():
        if not line.strip():
            continue
        if (head := _GPU.fullmatch(line)) is not None:
            gpus.append(_Gpu(head.group(1)))
            stack = []
            continue
        if not gpus:
            continue
        match = _ITEM.fullmatch(line)
        indent, label, value = len(match.group(1)), match.group(2), match.group(3)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = tuple(name for _, name in stack) + (label,)
        if value is None:
            stack.append((indent, label))
        elif path[:1] == ("Processes",):
            if label == "Process ID" or not gpus[-1].processes:
                gpus[-1].processes.append({})
            gpus[-1].processes[-1][label] = value.strip()
        else:
            gpus[-1].values.setdefault(path, value.strip())
    return gpus


def parse_query_text(data: bytes | str, tool: str = "nvidia-smi") -> list[AcceleratorSample]:
    """Every GPU of an ``nvidia-smi -q`` report, with its processes.

    Raises ``SmiFormatError`` when the text holds no GPU section.
    """
    text = text_of(data)
    samples = []
    for index, gpu in enumerate(_sections(text)):
        uuid = gpu.first("uuid")
        uuid = None if uuid is None or is_unknown(uuid) else uuid
        processes = tuple(
            AcceleratorProcess(pid=pid, name=entry.get("Name", ""),
                               mem_used_mib=number(entry.get("Used GPU Memory")),
                               device_uuid=uuid, device_index=index)
            for entry in gpu.processes if (pid := integer(entry.get("Process ID"))) is not None)
        samples.append(AcceleratorSample(
            host="", index=index, uuid=uuid, name=gpu.first("name") or f"GPU {index}",
            util_pct=number(gpu.first("util")),
            mem_used_mib=number(gpu.first("used")), mem_total_mib=number(gpu.first("total")),
            temp_c=number(gpu.first("temp")), power_w=number(gpu.first("power")),
            processes=processes, bus_id=gpu.bus_id,
        ))
    if not samples:
        raise SmiFormatError(explain(tool, text))
    return samples
