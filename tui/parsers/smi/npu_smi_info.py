"""``npu-smi info``: Huawei Ascend's status table, in every layout it has printed.

npu-smi has no CSV mode, and each chip family moves the columns: the 910/910B
layout (``NPU Name | Health | Power Temp Hugepages`` over ``Chip | Bus-Id |
AICore Memory HBM``), A3's two dies per NPU (``Chip Phy-ID``; die 1 prints
``-`` for power), 310/310P's several chips per card (``Chip Device``, DDR
memory only, power ``NA``), the wider 26.x columns, and Ascend 950's
``NPU ID | Name`` split with ``NPU Util(%)``. So rows are split on ``|`` and
value pairs on ``/``, never at fixed columns, and the header row decides what
each number means. Each device takes two rows; a chip is one sample.

Memory is the HBM pair where the table has one (910, 910B, A3, 950) and the
DDR ``Memory-Usage`` pair otherwise (310, 310P), as the tool itself reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tui.parsers.smi.common import cells, integer, is_rule, number, text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample, SmiFormatError

_PAIRS = re.compile(r"(\S+?)\s*/\s*(\S+)")


@dataclass(frozen=True, slots=True)
class _Layout:
    """What the header rows say about the columns."""

    second_id: str | None  # "phy" (A3), "device" (310/310P) or None: what follows Chip
    has_hbm: bool


def _merge_leading(row: list[str]) -> list[str]:
    """Ascend 950 splits ``NPU ID | Name``; join leading cells so every layout has three."""
    return [" ".join(cell for cell in row[:-2] if cell)] + row[-2:] if len(row) > 3 else row


def _layout(second_header: list[str]) -> _Layout:
    first, readings = second_header[0], second_header[-1]
    second_id = "phy" if "Phy-ID" in first else "device" if "Device" in first else None
    return _Layout(second_id=second_id, has_hbm="HBM" in readings)


def _chip(layout: _Layout, first: list[str], second: list[str]) -> AcceleratorSample | None:
    """One chip from its two rows, or None when the rows are not a chip's."""
    head = first[0].split(maxsplit=1)
    npu_id = integer(head[0]) if head else None
    top = first[2].split()
    ids = second[0].split()
    bottom = second[2]
    pairs = [(number(used), number(total)) for used, total in _PAIRS.findall(bottom)]
    util_words = bottom.split()
    if npu_id is None or len(top) < 2 or not pairs or not util_words:
        return None
    chip_id = integer(ids[0]) if ids else 0
    other_id = integer(ids[1]) if len(ids) > 1 else None
    used, total = pairs[-1] if layout.has_hbm else pairs[0]
    return AcceleratorSample(
        host="", index=other_id if other_id is not None else npu_id, uuid=None,
        name=head[1] if len(head) > 1 else f"NPU {npu_id}",
        util_pct=number(util_words[0]), mem_used_mib=used, mem_total_mib=total,
        temp_c=number(top[1]), power_w=number(top[0]),
        bus_id=second[1] if ":" in second[1] else None,  # A900 A5 boards print NA
        npu_id=npu_id, chip_id=chip_id,
    )


def _process(header: list[str], row: list[str]) -> tuple[int, int, AcceleratorProcess] | None:
    """(NPU id, chip, process) from a process row, by the header's column names."""
    columns = {name: value for name, value in zip(header, row)}
    where = row[0].split()
    npu_id = integer(where[0]) if where else None
    pid = integer(columns.get("Process id"))
    if npu_id is None or pid is None:
        return None
    chip = integer(where[1]) if len(where) > 1 else 0
    return npu_id, chip if chip is not None else 0, AcceleratorProcess(
        pid=pid, name=columns.get("Process name", ""),
        mem_used_mib=number(columns.get("Process memory(MB)")))


def parse_info(data: bytes | str, tool: str = "npu-smi") -> list[AcceleratorSample]:
    """One sample per chip (per die on A3), each with its processes.

    Rows that do not fit are skipped (an author's ``...`` elision, a table cut
    off mid-device). Raises ``SmiFormatError`` when no chip is found, e.g. for
    an error message.
    """
    text = text_of(data)
    layout: _Layout | None = None
    header_rows: list[list[str]] = []
    process_header: list[str] | None = None
    pending: list[str] | None = None
    samples: list[AcceleratorSample] = []
    found: list[tuple[int, int, AcceleratorProcess]] = []
    for line in text.splitlines():
        if is_rule(line):
            pending = None  # a device's two rows are never split by a rule: a cut device ends here
            continue
        if not line.lstrip().startswith("|"):
            continue
        row = cells(line)
        if any(cell.startswith("Process id") for cell in row):
            process_header = [re.sub(r"\s+", " ", cell) for cell in row]
            process_header[0] = "NPU"
        elif process_header is not None:
            if (process := _process(process_header, row)) is not None:
                found.append(process)
        elif any(cell.startswith("Health") for cell in row) or (header_rows and len(header_rows) < 2):
            header_rows.append(_merge_leading(row))
            if len(header_rows) == 2:
                layout = _layout(header_rows[1])
        elif layout is not None and len(row := _merge_leading(row)) == 3:
            if pending is None:
                pending = row
            else:
                if (sample := _chip(layout, pending, row)) is not None:
                    samples.append(sample)
                pending = None
    if not samples:
        raise SmiFormatError(explain(tool, text))
    return [_own_processes(sample, found) for sample in samples]


def _own_processes(sample: AcceleratorSample,
                   found: list[tuple[int, int, AcceleratorProcess]]) -> AcceleratorSample:
    """The sample with the processes listed under its NPU id and chip."""
    mine = tuple(replace(process, device_index=sample.index) for npu_id, chip, process in found
                 if (npu_id, chip) == (sample.npu_id, sample.chip_id))
    return replace(sample, processes=mine) if mine else sample
