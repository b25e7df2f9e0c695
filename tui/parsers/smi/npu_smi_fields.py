"""``npu-smi info -t usages|common -i N`` and ``npu-smi info -l``: ``Label : value`` blocks.

One grammar for the three: blank lines separate blocks, an ``NPU ID`` line
opens a card, a ``Chip ID`` line (printed before the chip's fields by
``common`` and after them by ``usages``) or a ``Chip Name : mcu`` line says
whose fields a block holds. Ascend 950 prints no chip lines at all.

They add what the ``info`` table lacks: utilisation of the vector and CPU
cores, memory bandwidth, and on 310P the board power (the table prints
``NA``; only the ``mcu`` block of ``common`` has it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tui.parsers.smi.common import integer, number, text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import SmiFormatError


@dataclass(frozen=True, slots=True)
class NpuBlock:
    """One block: a card's header, a chip's fields, or the board controller's (``name="mcu"``)."""

    npu_id: int | None
    chip_id: int | None
    name: str | None
    fields: dict[str, str] = field(default_factory=dict)


def parse_fields(data: bytes | str, tool: str = "npu-smi") -> list[NpuBlock]:
    """Every block of a ``-t usages``, ``-t common`` or ``-l`` output, in order.

    Raises ``SmiFormatError`` when there are no ``Label : value`` lines.
    """
    text = text_of(data)
    blocks: list[NpuBlock] = []
    npu_id: int | None = None
    current: dict[str, str] = {}

    def close() -> None:
        nonlocal npu_id
        if current:
            npu_id = integer(current.get("NPU ID")) if "NPU ID" in current else npu_id
            blocks.append(NpuBlock(npu_id=npu_id, chip_id=integer(current.get("Chip ID")),
                                   name=current.get("Chip Name"), fields=dict(current)))
            current.clear()

    for line in text.splitlines():
        label, colon, value = line.partition(":")
        if not colon:
            close()
            continue
        current[label.strip()] = value.strip()
    close()
    if not blocks:
        raise SmiFormatError(explain(tool, text))
    return blocks


def _is_mcu(block: NpuBlock) -> bool:
    """The board's micro-controller (printed ``mcu`` or ``Mcu``), which is no compute chip."""
    return (block.name or "").lower() == "mcu"


def board_power_w(blocks: list[NpuBlock]) -> float | None:
    """A card's power from ``-t common``: the ``mcu`` block's on 310P, else the first chip's."""
    for block in sorted(blocks, key=lambda block: not _is_mcu(block)):
        power = number(block.fields.get("NPU Real-time Power(W)"))
        if power is not None:
            return power
    return None
