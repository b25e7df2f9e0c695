"""``npu-smi info -m``: which chips each NPU card holds and their logical ids.

Columns are padded with ``%-30s`` and a chip name has one inner space
(``Ascend 910B4``), so cells are split at runs of two or more spaces. Ascend
950 replaces ``Chip Logic ID`` with ``Slot ID`` and ``Chip Phy-ID``; the
board controller (``Mcu``) has ``-`` ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui.parsers.smi.common import integer, text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import SmiFormatError

_GAP = re.compile(r"\s{2,}|\t")


@dataclass(frozen=True, slots=True)
class ChipMapping:
    """One row: a chip (or the ``Mcu``) of an NPU card."""

    npu_id: int
    chip_id: int
    logic_id: int | None
    phy_id: int | None
    name: str

    @property
    def is_compute(self) -> bool:
        """False for the board controller, which runs no work."""
        return self.name.lower() != "mcu"


def parse_mapping(data: bytes | str, tool: str = "npu-smi") -> list[ChipMapping]:
    """Every row of ``npu-smi info -m``. Raises ``SmiFormatError`` without a header."""
    text = text_of(data)
    header: list[str] | None = None
    rows = []
    for line in text.splitlines():
        words = [word for word in _GAP.split(line.strip()) if word]
        if not words:
            continue
        if header is None:
            header = words if words[0] == "NPU ID" else None
            continue
        row = dict(zip(header, words))
        npu_id, chip_id = integer(row.get("NPU ID")), integer(row.get("Chip ID"))
        if npu_id is None or chip_id is None or len(words) != len(header):
            continue
        rows.append(ChipMapping(npu_id=npu_id, chip_id=chip_id,
                                logic_id=integer(row.get("Chip Logic ID")),
                                phy_id=integer(row.get("Chip Phy-ID")),
                                name=row.get("Chip Name", "")))
    if not rows:
        raise SmiFormatError(explain(tool, text))
    return rows
