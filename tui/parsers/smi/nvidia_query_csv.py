"""``nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]`` and ``--query-compute-apps``.

The query mode is nvidia-smi's stable interface (the default table changes
layout between drivers). ``GPU_FIELDS`` uses only fields every driver since the
R3xx series knows, so one field list works on old and new boxes alike; a
driver that lacks a field refuses the whole query ("not a valid field"), which
``failures.explain`` turns into a status line.

Rows are ``", "``-separated without quoting. With a header (``--format=csv``)
the header names the fields (``memory.used [MiB]``); without one the caller
says which fields it asked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tui.parsers.smi.common import integer, is_unknown, number, text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample, SmiFormatError

GPU_FIELDS: tuple[str, ...] = (
    "index", "uuid", "name", "utilization.gpu", "memory.used", "memory.total",
    "temperature.gpu", "power.draw", "pci.bus_id",
)
# ``used_memory`` is printed in headers under its alias ``used_gpu_memory``.
APP_FIELDS: tuple[str, ...] = ("gpu_uuid", "pid", "process_name", "used_memory")
_ALIASES = {"used_gpu_memory": "used_memory"}
# Fields whose text may itself contain ", " (a Windows path); extra cells go there.
_FREE_TEXT = ("process_name", "name", "gpu_name")
_KNOWN = set(GPU_FIELDS) | set(APP_FIELDS)
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_UNIT_TAG = re.compile(r"\s*\[[^\]]*\]$")


def header_fields(line: str) -> tuple[str, ...] | None:
    """The field names of a CSV header line, unit tags dropped; None if ``line`` is data.

    A header is all field-like words and names at least one field we read, so
    a data row of bare words (``P0``) is not taken for one.
    """
    names = tuple(_ALIASES.get(name, name) for name in
                  (_UNIT_TAG.sub("", cell.strip()) for cell in line.split(",")))
    if all(_FIELD_NAME.fullmatch(name) for name in names) and set(names) & _KNOWN:
        return names
    return None


def _row(line: str, fields: Sequence[str]) -> dict[str, str] | None:
    """Map one data line onto ``fields``; None when the cell count cannot fit."""
    cells = [cell.strip() for cell in line.split(",")]
    extra = len(cells) - len(fields)
    if extra > 0:
        free = next((fields.index(name) for name in _FREE_TEXT if name in fields), None)
        if free is None:
            return None
        cells[free:free + extra + 1] = [", ".join(cells[free:free + extra + 1])]
    if len(cells) != len(fields):
        return None
    return dict(zip(fields, cells))


def gpu_sample(line: str, fields: Sequence[str] = GPU_FIELDS,
               position: int = 0) -> AcceleratorSample | None:
    """One ``--query-gpu`` data line as a sample, or None if it is not one.

    ``position`` stands in for the index when the query did not ask for it.
    """
    row = _row(line, fields)
    if row is None:
        return None
    index = integer(row["index"]) if "index" in row else position
    if index is None:
        return None
    # R535+ also offers power.draw.average / .instant; take the first one known.
    power = next((value for field in ("power.draw", "power.draw.average", "power.draw.instant")
                  if (value := number(row.get(field))) is not None), None)
    uuid = row.get("uuid")
    bus_id = row.get("pci.bus_id")
    return AcceleratorSample(
        host="", index=index,
        uuid=None if uuid is None or is_unknown(uuid) else uuid,
        name=row.get("name") or f"GPU {index}",
        util_pct=number(row.get("utilization.gpu")),
        mem_used_mib=number(row.get("memory.used")),
        mem_total_mib=number(row.get("memory.total")),
        temp_c=number(row.get("temperature.gpu")),
        power_w=power,
        bus_id=None if bus_id is None or is_unknown(bus_id) else bus_id,
    )


def _data_lines(text: str, fields: Sequence[str]) -> tuple[list[str], tuple[str, ...]]:
    """Non-empty lines, with a header line (if any) replacing ``fields``."""
    lines = [line for line in text.splitlines() if line.strip()]
    if lines:
        header = header_fields(lines[0])
        if header is not None:
            return lines[1:], header
    return lines, tuple(fields)


def parse_gpus(data: bytes | str, fields: Sequence[str] = GPU_FIELDS,
               tool: str = "nvidia-smi") -> list[AcceleratorSample]:
    """Every GPU row in a ``--query-gpu`` output; rows that do not fit are skipped.

    Raises ``SmiFormatError`` when nothing fits (an error message, junk), with
    the reason as one line.
    """
    text = text_of(data)
    lines, fields = _data_lines(text, fields)
    samples = [sample for position, line in enumerate(lines)
               if (sample := gpu_sample(line, fields, position)) is not None]
    if not samples:
        raise SmiFormatError(explain(tool, text))
    return samples


def parse_compute_apps(data: bytes | str, fields: Sequence[str] = APP_FIELDS,
                       tool: str = "nvidia-smi") -> list[AcceleratorProcess]:
    """Processes from ``--query-compute-apps``; empty output means none run.

    ``used_memory`` is ``[N/A]`` under Windows WDDM and for some MIG setups:
    unknown, not zero.
    """
    text = text_of(data)
    lines, fields = _data_lines(text, fields)
    if not lines:
        return []
    processes = []
    for line in lines:
        row = _row(line, fields)
        pid = integer(row.get("pid")) if row else None
        if row is None or pid is None:
            continue
        uuid = row.get("gpu_uuid")
        processes.append(AcceleratorProcess(
            pid=pid, name=row.get("process_name", ""),
            mem_used_mib=number(row.get("used_memory")),
            device_uuid=None if uuid is None or is_unknown(uuid) else uuid,
        ))
    if not processes:
        raise SmiFormatError(explain(tool, text))
    return processes
