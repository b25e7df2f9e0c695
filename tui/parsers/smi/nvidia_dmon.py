"""``nvidia-smi dmon``: one whitespace-separated row per GPU per interval.

The ``# gpu pwr gtemp …`` header names the columns, which depend on the
``-s`` selection, so columns are looked up by name. dmon reports no UUID, no
name and (without ``-s m``) no memory, so those stay unknown.
"""

from __future__ import annotations

from tui.parsers.smi.common import integer, number, text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import AcceleratorSample, SmiFormatError


def parse_dmon(data: bytes | str, tool: str = "nvidia-smi") -> list[AcceleratorSample]:
    """Every row of a dmon capture (several per GPU when it ran for several intervals)."""
    text = text_of(data)
    columns: list[str] = []
    samples = []
    for line in text.splitlines():
        words = line.split()
        if line.startswith("#"):
            if words[1:2] == ["gpu"]:
                columns = words[1:]
            continue
        if not columns or len(words) != len(columns):
            continue
        row = dict(zip(columns, words))
        index = integer(row["gpu"])
        if index is None:
            continue
        samples.append(AcceleratorSample(
            host="", index=index, uuid=None, name=f"GPU {index}",
            util_pct=number(row.get("sm")), mem_used_mib=number(row.get("fb")), mem_total_mib=None,
            temp_c=number(row.get("gtemp")), power_w=number(row.get("pwr")),
        ))
    if not samples:
        raise SmiFormatError(explain(tool, text))
    return samples
