"""``take_snapshot``: one reading per host for ``check --json``."""

from tests.sources.accelerators.conftest import AMD_SMI_R9700, H100_MIG, H100_REAL, NO_DRIVER, NPU_310P
from tui.sources.accelerators.detect import NONE_FOUND
from tui.sources.accelerators.runner import LocalRunner
from tui.sources.accelerators.snapshot import take_snapshot

KEYS = ["host", "index", "uuid", "name", "util_pct", "mem_used_mib", "mem_total_mib", "temp_c", "power_w"]


async def test_check_json_objects_from_nvidia_smi(tools):
    tools.add("nvidia-smi", H100_REAL)
    snapshot = await take_snapshot(LocalRunner(), "gpu-box")
    assert (snapshot.tool, snapshot.problem) == ("nvidia-smi", None)
    (device,) = [sample.to_json() for sample in snapshot.samples]
    assert list(device) == KEYS
    assert device == {"host": "gpu-box", "index": 0, "uuid": "GPU-e431363e-4b57-b4dd-d319-019caf935337",
                      "name": "NVIDIA H100 80GB HBM3", "util_pct": 100.0, "mem_used_mib": 17485.0,
                      "mem_total_mib": 81559.0, "temp_c": 63.0, "power_w": 696.73}
    assert [p.pid for p in snapshot.samples[0].processes] == [417]


async def test_unknown_is_null_in_json(tools):
    tools.add("nvidia-smi", H100_MIG)
    (device,) = (await take_snapshot(LocalRunner(), "mig")).samples
    assert device.to_json()["util_pct"] is None


async def test_local_falls_back_from_nvml_to_nvidia_smi(tools):
    # pynvml is installed here but there is no NVIDIA driver library: NVML is skipped quietly.
    tools.add("nvidia-smi", H100_REAL)
    snapshot = await take_snapshot(LocalRunner(), "localhost", local=True)
    assert snapshot.tool == "nvidia-smi"
    assert len(snapshot.samples) == 1


async def test_npu_snapshot_index_and_hbm(tools):
    tools.add("npu-smi", NPU_310P)
    snapshot = await take_snapshot(LocalRunner(), "ascend")
    assert [(s["index"], s["uuid"], s["mem_total_mib"]) for s in map(lambda x: x.to_json(), snapshot.samples)] == [
        (n, None, 21527) for n in range(6)]


async def test_nothing_readable_gives_a_reason_not_an_exception(tools):
    assert (await take_snapshot(LocalRunner(), "cpu-box")).problem == NONE_FOUND
    tools.add("nvidia-smi", NO_DRIVER)
    snapshot = await take_snapshot(LocalRunner(), "broken")
    assert snapshot.samples == []
    assert snapshot.problem.startswith("nvidia-smi: cannot talk to the NVIDIA driver")


async def test_a_rocm_7_host_with_amd_smi_alone_is_read_through_its_table(tools):
    tools.add("amd-smi", AMD_SMI_R9700)
    snapshot = await take_snapshot(LocalRunner(), "amd-box")
    assert (snapshot.tool, snapshot.problem) == ("amd-smi", None)
    assert [(d["index"], d["name"], d["mem_total_mib"], d["power_w"])
            for d in (sample.to_json() for sample in snapshot.samples)] == [
        (0, "...Radeon AI PRO R9700", 32624, 103), (1, "...Radeon AI PRO R9700", 32624, 92)]
