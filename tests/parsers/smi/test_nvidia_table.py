"""nvidia-smi's default table in every layout of the corpus: values per GPU and process."""

import pytest

from tests.parsers.smi.corpus_files import H100_REAL, data, smi
from tui.parsers.smi.nvidia_table import parse_table
from tui.parsers.smi.records import SmiFormatError


def readings(gpu):
    return (gpu.index, gpu.name, gpu.util_pct, gpu.mem_used_mib, gpu.mem_total_mib, gpu.temp_c, gpu.power_w)


@pytest.mark.parametrize(("path", "expected", "pids"), [
    (smi("001"), (0, "NVIDIA H100 80GB HBM3", None, 11125, 81559, 52, 432), [21180, 21181, 21198]),
    (smi("004"), (0, "NVIDIA H200", 100, 32362, 143771, 52, 628), [10291, 10293, 10309]),
    (smi("005"), (0, "NVIDIA L40S", 9, 1235, 46068, 54, 110), [20037, 20038]),
    (smi("006"), (0, "NVIDIA GeForce RTX 2080 ...", 8, 815, 8192, 38, 97), [1720, 4556, 28511, 28512]),
    (smi("019d"), (0, "GeForce GTX 105...", 0, 0, 4040, 54, None), []),
    (smi("019e"), (0, "Quadro K3100M", 54, 46, 4034, 32, 9), []),
    (H100_REAL / "nvidia-smi_default_idle.txt", (0, "NVIDIA H100 80GB HBM3", 0, 0, 81559, 32, 117), []),
    (H100_REAL / "nvidia-smi_default_busy.txt", (0, "NVIDIA H100 80GB HBM3", 100, 31859, 81559, 50, 694), [407]),
])
def test_single_gpu_tables(path, expected, pids):
    (gpu,) = parse_table(data(path))
    assert readings(gpu) == expected
    assert [process.pid for process in gpu.processes] == pids


def test_mig_table_keeps_the_parent_gpu_and_its_gi_processes():
    (gpu,) = parse_table(data(smi("001")))
    assert gpu.util_pct is None  # N/A under MIG
    assert [(p.name, p.mem_used_mib) for p in gpu.processes][2] == ("./gpu_burn", 7484)


def test_windows_wddm_table_process_memory_is_unknown():
    (gpu,) = parse_table(data(smi("007")))
    assert readings(gpu) == (0, "NVIDIA GeForce RTX 2080 ...", 7, 1296, 8192, 45, 97)
    assert len(gpu.processes) == 12
    assert gpu.processes[8].name == r"...m Files\NZXT CAM\NZXT CAM.exe"
    assert all(process.mem_used_mib is None for process in gpu.processes)


def test_two_gpus_each_get_their_own_processes():
    first, second = parse_table(data(smi("014")))
    assert readings(first) == (0, "NVIDIA GeForce RTX 3090", 0, 513, 24576, 29, 38)
    assert readings(second) == (1, "NVIDIA GeForce RTX 3090", 0, 12, 24576, 25, 17)
    assert [p.pid for p in first.processes] == [3494, 3634, 5000, 6614]
    assert [(p.pid, p.mem_used_mib) for p in second.processes] == [(3494, 4)]


def test_not_a_table():
    with pytest.raises(SmiFormatError, match="no NVIDIA devices found"):
        parse_table(data(smi("017")))
