"""``nvidia-smi -q -x``: the full report as XML.

The most stable of nvidia-smi's formats (a versioned DTD, unchanged element
names since R418 except for power, which R530+ moved from ``power_readings``
to ``gpu_power_readings`` and R535+ split into ``average``/``instant``), so it
is the fallback when a driver rejects the ``--query-gpu`` fields.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

from tui.parsers.smi.common import integer, is_unknown, number, text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample, SmiFormatError

# Where each reading lives, newest driver first; the first known value wins.
_POWER = ("gpu_power_readings/power_draw", "gpu_power_readings/average_power_draw",
          "gpu_power_readings/instant_power_draw", "power_readings/power_draw")


def _first_number(gpu: ElementTree.Element, paths: tuple[str, ...]) -> float | None:
    return next((value for path in paths if (value := number(gpu.findtext(path))) is not None), None)


def _processes(gpu: ElementTree.Element, index: int, uuid: str | None) -> tuple[AcceleratorProcess, ...]:
    found = []
    for info in gpu.iterfind("processes/process_info"):
        pid = integer(info.findtext("pid"))
        if pid is not None:
            found.append(AcceleratorProcess(
                pid=pid, name=(info.findtext("process_name") or "").strip(),
                mem_used_mib=number(info.findtext("used_memory")),
                device_uuid=uuid, device_index=index))
    return tuple(found)


def parse_xml(data: bytes | str, tool: str = "nvidia-smi") -> list[AcceleratorSample]:
    """Every ``<gpu>`` of the report, in nvidia-smi's index order, with its processes.

    Raises ``SmiFormatError`` for a cut-off document, an error message or a
    report without GPUs.
    """
    text = text_of(data)
    try:
        root = ElementTree.fromstring(text.encode())
    except ElementTree.ParseError as error:
        message = explain(tool, text) if "<" not in text else f"{tool}: XML report cut off or invalid ({error})"
        raise SmiFormatError(message) from None
    samples = []
    for index, gpu in enumerate(root.iterfind("gpu")):
        uuid = (gpu.findtext("uuid") or "").strip()
        uuid = None if is_unknown(uuid) else uuid
        samples.append(AcceleratorSample(
            host="", index=index, uuid=uuid,
            name=(gpu.findtext("product_name") or f"GPU {index}").strip(),
            util_pct=number(gpu.findtext("utilization/gpu_util")),
            mem_used_mib=number(gpu.findtext("fb_memory_usage/used")),
            mem_total_mib=number(gpu.findtext("fb_memory_usage/total")),
            temp_c=number(gpu.findtext("temperature/gpu_temp")),
            power_w=_first_number(gpu, _POWER),
            processes=_processes(gpu, index, uuid),
            bus_id=gpu.get("id"),
        ))
    if not samples:
        raise SmiFormatError(f"{tool}: the XML report lists no GPUs")
    return samples
