"""``npu-smi info -t topo``: how NPUs are linked (HCCS, PCIe…) and their CPU affinity.

A whitespace matrix under an ``NPU0 NPU1 … CPU Affinity`` header (some
copies drop the header's leading blank column), followed by a legend.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.parsers.smi.common import text_of
from tui.parsers.smi.failures import explain
from tui.parsers.smi.records import SmiFormatError


@dataclass(frozen=True, slots=True)
class NpuLinks:
    """One row of the matrix: ``links[peer]`` is ``X`` (self), ``HCCS``, ``PIX``, ``SYS``…"""

    npu: str
    links: dict[str, str]
    cpu_affinity: str | None


def parse_topo(data: bytes | str, tool: str = "npu-smi") -> list[NpuLinks]:
    """The matrix rows, up to the legend. Raises ``SmiFormatError`` without one."""
    text = text_of(data)
    peers: list[str] = []
    rows = []
    for line in text.splitlines():
        words = line.split()
        if not words or line.startswith("Legend"):
            if rows:
                break
            continue
        if not peers:
            if words[-2:] == ["CPU", "Affinity"]:
                peers = words[:-2]
            continue
        if len(words) not in (len(peers) + 1, len(peers) + 2):
            continue
        rows.append(NpuLinks(npu=words[0], links=dict(zip(peers, words[1:len(peers) + 1])),
                             cpu_affinity=words[len(peers) + 1] if len(words) == len(peers) + 2 else None))
    if not rows:
        raise SmiFormatError(explain(tool, text))
    return rows
