"""Fake accelerator tools on PATH that replay recorded real output (see ``replay.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.smi.corpus_files import H100_CAPTURE, smi
from tests.sources.accelerators.replay import install, path_with
from tui.parsers.smi.nvidia_query_csv import APP_FIELDS, GPU_FIELDS
from tui.sources.accelerators.rocm_smi import ARGV as ROCM_ARGV

H100_MIG = {"gpus": str(smi("003")), "apps": str(smi("002"))}
H100_REAL = {"gpus": str(H100_CAPTURE / "query_gpu_load.csv"), "gpu_fields": list(GPU_FIELDS),
             "apps": str(H100_CAPTURE / "query_compute_apps_load.csv"), "app_fields": list(APP_FIELDS)}
NO_DRIVER = {"fail": str(smi("015")), "fail_status": 9}
NO_DEVICES = {"fail": str(smi("017")), "fail_status": 6}
NPU_910B4_BUSY = {"replies": {"info": str(smi("026"))}}  # two NPUs, a vLLM worker on each
NPU_310P = {"replies": {"info": str(smi("028")), **{f"info -t common -i {npu}": str(smi("031"))
                                                    for npu in (0, 32, 96, 32768, 32800, 32896)}}}
ROCM_MI100 = {"replies": {" ".join(ROCM_ARGV[1:]): str(smi("050"))}}
AMD_SMI_R9700 = {"replies": {"": str(smi("052"))}}  # ROCm 7.2's amd-smi, with no arguments


class Tools:
    """Installs fake tools into a PATH of their own."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir

    def add(self, tool: str, config: dict) -> None:
        install(self.bin_dir, tool, config)

    def remove(self, tool: str) -> None:
        (self.bin_dir / tool).unlink()


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Tools:
    """An empty bin folder first on PATH; nothing else there has an accelerator tool."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", path_with(bin_dir))
    return Tools(bin_dir)
