"""The NVML poller's handling of NVML's answers and errors: the real pynvml where this machine can
answer (no driver here), otherwise a scripted device giving a real H100's recorded answers and
raising pynvml's own errors (why a stand-in at all: fake_pynvml.py; the real library on a real H100
is checked in tests/parsers/smi/test_real_gpu.py)."""

import inspect
import json
from dataclasses import asdict

import pynvml
import pytest

from tests.sources.accelerators import fake_pynvml as fake
from tests.sources.accelerators.fake_pynvml import READINGS, recorded_h100
from tests.support import packages_loaded_by
from tui.sources.accelerators.nvml import NvmlPoller
from tui.sources.accelerators.poller import PollerError
from tui.sources.accelerators.runner import ToolMissing


@pytest.mark.parametrize("phase", ["idle", "load"])
async def test_the_real_h100s_answers_give_the_readings_the_real_poller_took(phase):
    (gpu,) = await NvmlPoller(nvml=fake.Library([recorded_h100(phase)])).read_once()
    assert json.loads(json.dumps(asdict(gpu))) == READINGS[phase]["nvml"][0]


def test_every_scripted_call_is_a_real_pynvml_call():
    """The stand-in cannot drift from the library: same names, same parameters (the real
    calls may have more, with defaults)."""
    for name, scripted in vars(fake.Library).items():
        if name.startswith("nvml"):
            real = list(inspect.signature(getattr(pynvml, name)).parameters.values())
            mine = list(inspect.signature(scripted).parameters)[1:]  # without self
            assert [p.name for p in real[:len(mine)]] == mine, name
            assert all(p.default is not p.empty for p in real[len(mine):]), name


async def test_memory_v2_leaves_out_the_driver_reserve_and_v1_is_the_fallback():
    library = fake.Library([recorded_h100("idle")])  # the driver's 480 MiB reserve, nothing else
    (gpu,) = await NvmlPoller(nvml=library).read_once()
    assert gpu.mem_used_mib == 0
    del library.nvmlMemory_v2  # an old binding without the v2 struct
    (gpu,) = await NvmlPoller(nvml=library).read_once()
    assert gpu.mem_used_mib == READINGS["idle"]["nvml_raw_memory"][0]["v1_used_mib"] == 480


async def test_unsupported_readings_are_unknown_not_a_failed_poll():
    unsupported = fake.NVML_ERROR_NOT_SUPPORTED  # MIG, some boards
    device = recorded_h100(util_error=unsupported, power_mw_error=unsupported, temp_error=unsupported)
    (gpu,) = await NvmlPoller(nvml=fake.Library([device])).read_once()
    assert (gpu.util_pct, gpu.power_w, gpu.temp_c) == (None, None, None)
    assert gpu.mem_used_mib == 17484.8125  # the rest still read


async def test_windows_process_memory_unknown():
    device = recorded_h100(processes=[(2056, "dwm.exe", None)])  # Windows: no per-process memory (corpus 008)
    (gpu,) = await NvmlPoller(nvml=fake.Library([device])).read_once()
    assert gpu.processes[0].mem_used_mib is None


async def test_driver_not_loaded_is_a_status():
    poller = NvmlPoller(nvml=fake.Library([], init_error=fake.NVML_ERROR_DRIVER_NOT_LOADED))
    with pytest.raises(PollerError, match="^NVML: Driver Not Loaded$"):
        await poller.read_once()


async def test_no_nvidia_library_means_the_tool_is_missing():
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
    library = fake.Library([recorded_h100(), recorded_h100(uuid="GPU-2")])
    poller = NvmlPoller(nvml=library)
    assert [gpu.index for gpu in await poller.read_once()] == [0, 1]
    await poller.read_once()
    assert library.initialised == 1
    await poller.close()
    await poller.close()
    assert library.initialised == 0


def test_pynvml_is_imported_lazily_and_the_core_stays_free_of_ui_and_ssh():
    code = ("import tui.sources.accelerators.watch, tui.sources.accelerators.snapshot\n"
            "import tui.model.accelerators, tui.parsers.smi.npu_smi_info")
    assert packages_loaded_by(code, {"pynvml", "textual", "asyncssh", "rich"}) == []
