"""Where the smi corpus and fixtures are, and which grammar reads each file."""

from __future__ import annotations

from pathlib import Path

from tests.corpus import CORPUS, REPO

SMI = CORPUS / "smi"
H100_REAL = SMI / "h100_real"
FIXTURES = REPO / "tests" / "fixtures" / "smi"
A3 = FIXTURES / "npu_a3_vllm-ascend-3002" / "npu-smi_info_A3-Ascend910x8x2dies_25.2.0_with-procs.txt"
H100_CAPTURE = FIXTURES / "h100_2026-11-22"


def smi(prefix: str) -> Path:
    """The corpus file whose name starts with ``prefix_`` (e.g. ``"020"``)."""
    matches = sorted(SMI.glob(f"{prefix}_*"))
    assert len(matches) == 1, f"expected one smi corpus file for {prefix!r}, found {matches}"
    return matches[0]


def data(path: Path) -> bytes:
    return path.read_bytes()
