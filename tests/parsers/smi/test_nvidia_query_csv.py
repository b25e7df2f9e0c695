"""nvidia-smi's query CSV, from every corpus capture: values, not just no crash."""

import pytest

from tests.parsers.smi.corpus_files import H100_REAL, data, smi
from tests.support import H100_REAL_FIELDS
from tui.parsers.smi.nvidia_query_csv import (
    GPU_FIELDS,
    gpu_sample,
    header_fields,
    parse_compute_apps,
    parse_gpus,
)
from tui.parsers.smi.records import SmiFormatError


def test_all_fields_h100_mig_reads_its_columns_by_header_and_mig_util_is_unknown():
    (gpu,) = parse_gpus(data(smi("003")))
    assert (gpu.index, gpu.name, gpu.uuid) == (0, "NVIDIA H100 80GB HBM3", "GPU-00000000-0000-0000-0000-000000000000")
    assert gpu.util_pct is None  # [N/A] under MIG: unknown, not idle
    assert (gpu.mem_used_mib, gpu.mem_total_mib, gpu.temp_c, gpu.power_w) == (11125, 81559, 53, 433.78)
    assert gpu.bus_id == "00000000:00:09.0"


def test_all_fields_rtx4080s_with_kmd_version_and_bare_na():
    (gpu,) = parse_gpus(data(smi("009")))
    assert gpu.name == "NVIDIA GeForce RTX 4080 SUPER"
    assert (gpu.util_pct, gpu.mem_used_mib, gpu.mem_total_mib, gpu.temp_c, gpu.power_w) == (7, 1474, 16376, 46, 84.24)


def test_noheader_nounits_with_the_callers_fields_and_na_fan():
    fields = "memory.total,memory.free,memory.used,temperature.gpu,fan.speed,utilization.gpu,utilization.memory"
    (gpu,) = parse_gpus(data(smi("019a")), fields=fields.split(","))
    assert (gpu.index, gpu.uuid, gpu.name) == (0, None, "GPU 0")  # not asked for: position and a label
    assert (gpu.mem_total_mib, gpu.mem_used_mib, gpu.temp_c, gpu.util_pct, gpu.power_w) == (2004, 0, 44, 0, None)


def test_nounits_header_keeps_unit_tags_and_file_has_no_trailing_newline():
    (gpu,) = parse_gpus(data(smi("019c")))
    assert (gpu.name, gpu.uuid) == ("Tesla P100-PCIE-16GB", "GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6")
    assert (gpu.util_pct, gpu.mem_used_mib, gpu.temp_c, gpu.power_w) == (0, 0, 37, 28.16)
    assert gpu.mem_total_mib is None  # not queried; never derived from free + used


def test_h100_real_header_units_and_nounits_rows():
    rows = parse_gpus(data(H100_REAL / "query_gpu_csv_idle.txt"))
    assert len(rows) == 2  # the units row and the nounits row under one header
    for gpu in rows:
        assert gpu.uuid == "GPU-da618c8b-ec49-272c-0c77-591f79f5f945"
        assert (gpu.util_pct, gpu.mem_used_mib, gpu.mem_total_mib, gpu.temp_c) == (0, 0, 81559, 31)
    assert [gpu.power_w for gpu in rows] == [117.66, 117.67]


def test_h100_real_busy_row_and_its_compute_apps():
    first, *apps = data(H100_REAL / "query_gpu_busy.txt").decode().splitlines(keepends=True)
    (gpu,) = parse_gpus(first, fields=H100_REAL_FIELDS)
    assert (gpu.util_pct, gpu.mem_used_mib, gpu.temp_c, gpu.power_w) == (100, 31859, 50, 697.0)
    (process,) = parse_compute_apps("".join(apps))
    assert (process.pid, process.name, process.mem_used_mib) == (407, "python3", 31850)
    assert process.device_uuid == gpu.uuid


def test_h100_real_loop_skips_the_stray_line():
    fields = "index,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw".split(",")
    rows = parse_gpus(data(H100_REAL / "query_loop.txt"), fields=fields)
    assert [gpu.power_w for gpu in rows] == [699.35, 698.91, 699.56, 696.70]
    assert {(gpu.util_pct, gpu.mem_used_mib) for gpu in rows} == {(100, 31859)}


def test_compute_apps_mig_masked_uuid():
    processes = parse_compute_apps(data(smi("002")))
    assert [(p.pid, p.name, p.mem_used_mib) for p in processes] == [
        (21180, "/root/tools/memhog", 2296), (21181, "/root/tools/memhog", 1272), (21198, "./gpu_burn", 7484)]


def test_compute_apps_windows_memory_is_unknown_and_paths_keep_their_spaces():
    processes = parse_compute_apps(data(smi("008")))
    assert len(processes) == 12
    assert all(p.mem_used_mib is None for p in processes)
    assert processes[4].name == r"C:\Program Files\NZXT CAM\NZXT CAM.exe"


def test_process_name_with_a_comma_is_kept_whole():
    (process,) = parse_compute_apps("GPU-1, 7, python train.py, lr=3, 100\n")
    assert (process.name, process.mem_used_mib) == ("python train.py, lr=3", 100)


def test_no_processes_is_an_empty_list():
    assert parse_compute_apps(b"") == []


@pytest.mark.parametrize(("path", "message"), [
    (smi("015"), "nvidia-smi: cannot talk to the NVIDIA driver"),
    (smi("017"), "nvidia-smi: no NVIDIA devices found"),
    (H100_REAL / "bad_field.txt", "nvidia-smi: this driver does not know the query field bogus.field"),
])
def test_failure_output_becomes_one_clear_line(path, message):
    with pytest.raises(SmiFormatError) as caught:
        parse_gpus(data(path))
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_row_cut_short_is_not_a_reading():
    assert gpu_sample("0, GPU-1, NVIDIA H100, 100, 31859") is None
    assert gpu_sample("") is None


def test_header_detection():
    assert header_fields("index, uuid, memory.used [MiB]") == ("index", "uuid", "memory.used")
    assert header_fields("pid, process_name, used_gpu_memory [MiB]") == ("pid", "process_name", "used_memory")
    assert header_fields("0, GPU-1, NVIDIA H100") is None
    assert header_fields("P0") is None


def test_gpu_fields_are_the_portable_ones():
    # Every one is still in R590's full field list (and all date from the R3xx drivers).
    known = set(header_fields(data(smi("003")).decode().splitlines()[0]))
    assert set(GPU_FIELDS) <= known
