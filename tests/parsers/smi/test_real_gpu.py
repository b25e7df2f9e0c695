"""The real-H100 check (issue 4), from what ``tests/hardware/capture_gpu.py`` recorded.

On 2026-11-22 an H100 80GB HBM3 (driver 580.159.04) was read through nvidia-smi
and through rlwatch's NVML poller, idle and under a torch load; see SOURCE.md in
the fixture folder. These tests check that the recorded nvidia-smi output parses
to that device with sensible values, and that the two paths agreed there.
"""


import pytest

from tests.parsers.smi.corpus_files import H100_CAPTURE
from tests.support import READINGS
from tui.parsers.smi.nvidia_query_csv import GPU_FIELDS, parse_compute_apps, parse_gpus

UUID = "GPU-e431363e-4b57-b4dd-d319-019caf935337"


def csv(name):
    return parse_gpus((H100_CAPTURE / name).read_bytes())


def test_capture_used_the_fields_rlwatch_queries():
    assert READINGS["gpu_fields"] == list(GPU_FIELDS)


def test_idle_row():
    (gpu,) = csv("query_gpu_idle.csv")
    assert (gpu.index, gpu.uuid, gpu.name, gpu.bus_id) == (0, UUID, "NVIDIA H100 80GB HBM3", "00000000:00:06.0")
    assert (gpu.util_pct, gpu.mem_used_mib, gpu.mem_total_mib, gpu.temp_c, gpu.power_w) == (0, 0, 81559, 44, 74.14)


def test_load_row_and_the_process_holding_memory():
    (gpu,) = csv("query_gpu_load.csv")
    assert (gpu.uuid, gpu.util_pct, gpu.mem_used_mib, gpu.temp_c, gpu.power_w) == (UUID, 100, 17485, 63, 696.73)
    (process,) = parse_compute_apps((H100_CAPTURE / "query_compute_apps_load.csv").read_bytes())
    assert (process.device_uuid, process.name, process.mem_used_mib) == (UUID, "/opt/torch/.venv/bin/python3", 17476)
    assert process.mem_used_mib <= gpu.mem_used_mib  # 16 GiB buffer + matrices + context, under the GPU's total


def test_loop_stream_rows_one_a_second_under_load():
    rows = csv("query_gpu_loop_load.csv")
    assert len(rows) == 4
    assert {(gpu.uuid, gpu.util_pct, gpu.mem_used_mib) for gpu in rows} == {(UUID, 100, 17485)}
    assert [gpu.temp_c for gpu in rows] == [63, 64, 64, 65]
    assert all(650 < gpu.power_w <= 700 for gpu in rows)  # near the 700 W cap under matmuls


@pytest.mark.parametrize("phase", ["idle", "load"])
def test_nvml_and_nvidia_smi_agreed(phase):
    pair = READINGS[phase]
    assert pair["seconds_apart"] < 1
    (nvml,), (smi,) = pair["nvml"], pair["nvidia_smi"]
    assert nvml["uuid"] == smi["uuid"] == UUID
    assert nvml["name"] == smi["name"]
    assert nvml["mem_total_mib"] == smi["mem_total_mib"] == 81559
    assert abs(nvml["mem_used_mib"] - smi["mem_used_mib"]) <= 1
    assert abs(nvml["util_pct"] - smi["util_pct"]) <= 5
    assert abs(nvml["temp_c"] - smi["temp_c"]) <= 2
    assert abs(nvml["power_w"] - smi["power_w"]) <= 0.05 * smi["power_w"]


def test_nvml_v1_memory_counts_the_reserve_v2_matches_nvidia_smi():
    (raw,) = READINGS["idle"]["nvml_raw_memory"]
    assert raw["v2_reserved_mib"] == raw["v1_used_mib"] - raw["v2_used_mib"] == 480
    (smi,) = READINGS["idle"]["nvidia_smi"]
    assert raw["v2_used_mib"] == smi["mem_used_mib"] == 0


def test_both_snapshots_give_the_check_json_object():
    (via_nvml,) = READINGS["snapshot_local_nvml"]
    (via_smi,) = READINGS["snapshot_nvidia_smi"]
    assert (via_nvml.pop("tool"), via_smi.pop("tool")) == ("NVML", "nvidia-smi")
    keys = ["host", "index", "uuid", "name", "util_pct", "mem_used_mib", "mem_total_mib", "temp_c", "power_w"]
    assert list(via_nvml) == list(via_smi) == keys
    assert via_nvml["uuid"] == via_smi["uuid"] == UUID
    assert via_nvml["util_pct"] == via_smi["util_pct"] == 100
