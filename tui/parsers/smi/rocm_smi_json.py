"""``rocm-smi … --json``: AMD GPUs as ``{"card0": {"GPU use (%)": "0", …}, "system": {…}}``.

Every value is a string and the keys depend on the flags and the ROCm
release, so each reading is looked up under the names ROCm 5–6 have used.
Memory comes in bytes and is converted to MiB like the other tools.

``amd-smi metric --json`` (ROCm 7's ``{"gpu_data": [...]}``) is recognised but
not read: no complete capture of it is in the corpus to test against.
"""

from __future__ import annotations

import json
import re

from tui.parsers.smi.common import is_unknown, number, text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import AcceleratorSample, SmiFormatError

_CARD = re.compile(r"card(\d+)")
_MIB = 1024 * 1024
_UTIL = ("GPU use (%)",)
_TEMP = ("Temperature (Sensor edge) (C)", "Temperature (Sensor junction) (C)",
         "Temperature (Sensor memory) (C)")
_POWER = ("Average Graphics Package Power (W)", "Current Socket Graphics Package Power (W)")
_NAME = ("Card Series", "Card series", "Device Name", "Card SKU", "Card model", "Card Model")


def _first(card: dict[str, object], keys: tuple[str, ...]) -> str | None:
    return next((str(card[key]) for key in keys if key in card and not is_unknown(str(card[key]))), None)


def parse_rocm_json(data: bytes | str, tool: str = "rocm-smi") -> list[AcceleratorSample]:
    """One sample per ``cardN``. Raises ``SmiFormatError`` for cut-off or foreign JSON."""
    text = text_of(data)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        message = (f"{tool}: JSON output cut off or invalid ({error.msg} at line {error.lineno})"
                   if text.lstrip().startswith(("{", "[")) else explain(tool, text))
        raise SmiFormatError(message) from None
    if not isinstance(document, dict) or "gpu_data" in document:
        raise SmiFormatError(f"{tool}: not rocm-smi's per-card JSON (amd-smi metric output is not read yet)")
    samples = []
    for key, card in document.items():
        match = _CARD.fullmatch(key)
        if match is None or not isinstance(card, dict):
            continue
        index = int(match.group(1))
        total, used = number(card.get("VRAM Total Memory (B)")), number(card.get("VRAM Total Used Memory (B)"))
        uuid = _first(card, ("Unique ID",))
        samples.append(AcceleratorSample(
            host="", index=index, uuid=uuid, name=_first(card, _NAME) or f"GPU {index}",
            util_pct=number(_first(card, _UTIL)),
            mem_used_mib=None if used is None else used / _MIB,
            mem_total_mib=None if total is None else total / _MIB,
            temp_c=number(_first(card, _TEMP)), power_w=number(_first(card, _POWER)),
            bus_id=_first(card, ("PCI Bus",)),
        ))
    if not samples:
        raise SmiFormatError(f"{tool}: the JSON lists no cards")
    return sorted(samples, key=lambda sample: sample.index)
