"""The NVML poller's handling of NVML's answers and errors: the real pynvml where this machine can
answer (no driver here), scripted devices raising pynvml's own errors otherwise (the real library on
a real H100 is checked in tests/parsers/smi/test_real_gpu.py)."""

import subprocess
import sys

import pytest

from tests.sources.accelerators import fake_pynvml as fake
from tui.sources.accelerators.nvml import NvmlPoller
from tui.sources.accelerators.poller import PollerError
from tui.sources.accelerators.runner import ToolMissing

MIB = 2**20


def h100(**changes):
    device = dict(uuid="GPU-e431363e-4b57-b4dd-d319-019caf935337", name="NVIDIA H100 80GB HBM3",
                  memory=(17485 * MIB, 81559 * MIB, 480 * MIB), util=100, power_mw=696732,
                  bus_id="00000000:00:06.0", temp=63, processes=[(417, "python3", 17476 * MIB)])
    return device | changes


async def test_readings_in_rlwatch_units():
    (gpu,) = await NvmlPoller(nvml=fake.Library([h100()])).read_once()
    assert (gpu.index, gpu.uuid, gpu.name, gpu.bus_id) == (0, "GPU-e431363e-4b57-b4dd-d319-019caf935337",
                                                           "NVIDIA H100 80GB HBM3", "00000000:00:06.0")
    assert (gpu.util_pct, gpu.mem_used_mib, gpu.mem_total_mib, gpu.temp_c, gpu.power_w) == (
        100, 17485, 81559, 63, 696.732)
    assert [(p.pid, p.name, p.mem_used_mib, p.device_uuid) for p in gpu.processes] == [
        (417, "python3", 17476, gpu.uuid)]


async def test_memory_v2_leaves_out_the_driver_reserve_and_v1_is_the_fallback():
    library = fake.Library([h100(memory=(0, 81559 * MIB, 480 * MIB))])
    (gpu,) = await NvmlPoller(nvml=library).read_once()
    assert gpu.mem_used_mib == 0
    del library.nvmlMemory_v2  # an old binding without the v2 struct
    (gpu,) = await NvmlPoller(nvml=library).read_once()
    assert gpu.mem_used_mib == 480


async def test_unsupported_readings_are_unknown_not_a_failed_poll():
    device = h100(util_error=fake.NVML_ERROR_NOT_SUPPORTED, power_mw_error=fake.NVML_ERROR_NOT_SUPPORTED,
                  temp_error=fake.NVML_ERROR_NOT_SUPPORTED)  # MIG, some boards
    (gpu,) = await NvmlPoller(nvml=fake.Library([device])).read_once()
    assert (gpu.util_pct, gpu.power_w, gpu.temp_c) == (None, None, None)
    assert gpu.mem_used_mib == 17485


async def test_windows_process_memory_unknown():
    (gpu,) = await NvmlPoller(nvml=fake.Library([h100(processes=[(2056, "dwm.exe", None)])])).read_once()
    assert gpu.processes[0].mem_used_mib is None


async def test_driver_not_loaded_is_a_status():
    poller = NvmlPoller(nvml=fake.Library([], init_error=fake.NVML_ERROR_DRIVER_NOT_LOADED))
    with pytest.raises(PollerError, match="^NVML: Driver Not Loaded$"):
        await poller.read_once()


async def test_no_nvidia_library_means_the_tool_is_missing():
    import pynvml

    try:  # the real library, on this machine
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        pass
    else:
        pynvml.nvmlShutdown()
        pytest.skip("this machine has NVIDIA's driver: the missing-library path cannot happen here")
    with pytest.raises(ToolMissing):
        await NvmlPoller().read_once()


async def test_no_devices():
    with pytest.raises(PollerError, match="no NVIDIA devices found"):
        await NvmlPoller(nvml=fake.Library([])).read_once()


async def test_init_once_and_shutdown_on_close():
    library = fake.Library([h100(), h100(uuid="GPU-2")])
    poller = NvmlPoller(nvml=library)
    assert [gpu.index for gpu in await poller.read_once()] == [0, 1]
    await poller.read_once()
    assert library.initialised == 1
    await poller.close()
    await poller.close()
    assert library.initialised == 0


def test_pynvml_is_imported_lazily_and_the_core_stays_free_of_ui_and_ssh():
    code = ("import sys\nimport tui.sources.accelerators.watch, tui.sources.accelerators.snapshot\n"
            "import tui.model.accelerators, tui.parsers.smi.npu_smi_info\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pynvml', 'textual', 'asyncssh', 'rich'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
