"""The watcher: finds the host's tool, streams, says what is wrong once, recovers."""

import asyncio
from contextlib import aclosing

from tests.sources.accelerators.conftest import (
    H100_REAL,
    NO_DEVICES,
    NO_DRIVER,
    NPU_310P,
    ROCM_MI100,
)
from tui.model.accelerators import AcceleratorHistory
from tui.sources.accelerators.detect import NONE_FOUND
from tui.sources.accelerators.poller import AcceleratorReadings, AcceleratorStatus
from tui.sources.accelerators.runner import LocalRunner
from tui.sources.accelerators.watch import watch_accelerators


async def collect(seconds, until=None, **options):
    """The watcher's events: for ``seconds`` (to show what is NOT said), or until ``until(events)``
    holds (with ``seconds`` as a generous limit, so a slow machine only waits longer)."""
    events = []

    async def run():
        async with aclosing(watch_accelerators(LocalRunner(), "box", **options)) as stream:
            async for event in stream:
                events.append(event)
                if until is not None and until(events):
                    return

    task = asyncio.create_task(run())
    await asyncio.wait([task], timeout=seconds)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return events


def statuses(events):
    return [(event.text, event.ok) for event in events if isinstance(event, AcceleratorStatus)]


def readings(events):
    return [event for event in events if isinstance(event, AcceleratorReadings)]


async def test_streams_nvidia_smi_readings_with_the_host(tools):
    tools.add("nvidia-smi", H100_REAL)
    events = await collect(20, until=lambda events: len(readings(events)) >= 3, interval=1)
    assert statuses(events) == [("nvidia-smi: 1 device(s)", True)]
    found = readings(events)
    assert len(found) >= 3  # the first reading, then the -l 1 stream
    assert {(s.host, s.util_pct, s.mem_used_mib) for event in found for s in event.samples} == {("box", 100, 17485)}


async def test_no_tool_at_all_is_said_once(tools):
    events = await collect(1.5, absent_retry_s=0.05)
    assert statuses(events) == [(NONE_FOUND, False)]  # tried many times, said once
    assert readings(events) == []


async def test_a_failing_driver_is_said_once_not_spammed(tools):
    tools.add("nvidia-smi", NO_DRIVER)
    events = await collect(1.5, retry_s=0.05)
    assert statuses(events) == [("nvidia-smi: cannot talk to the NVIDIA driver (not loaded, or replaced "
                                 "without a reboot)", False)]


async def test_no_devices(tools):
    tools.add("nvidia-smi", NO_DEVICES)
    events = await collect(1.5, retry_s=0.05)
    assert statuses(events) == [("nvidia-smi: no NVIDIA devices found", False)]


async def test_a_stream_that_dies_is_reported_and_retried(tools):
    tools.add("nvidia-smi", {**H100_REAL, **NO_DRIVER, "rows_then_fail": 1})
    events = await collect(20, until=lambda events: len(statuses(events)) >= 3, interval=1, retry_s=0.1)
    said = statuses(events)
    assert said[:3] == [("nvidia-smi: 1 device(s)", True),
                        ("nvidia-smi: cannot talk to the NVIDIA driver (not loaded, or replaced without a reboot)",
                         False),
                        ("nvidia-smi: 1 device(s)", True)]  # the retry found it working again
    assert len(readings(events)) >= 2


async def test_a_tool_installed_later_is_found(tools):
    async def install_soon():
        await asyncio.sleep(0.3)
        tools.add("rocm-smi", ROCM_MI100)

    installer = asyncio.create_task(install_soon())
    events = await collect(20, until=readings, interval=5, absent_retry_s=0.1)
    await installer
    assert statuses(events) == [(NONE_FOUND, False), ("rocm-smi: 4 device(s)", True)]
    assert [s.index for s in readings(events)[0].samples] == [0, 1, 2, 3]


async def test_a_broken_nvidia_smi_does_not_hide_a_working_npu_smi(tools):
    tools.add("nvidia-smi", NO_DEVICES)  # e.g. CUDA tools in an image on an Ascend box
    tools.add("npu-smi", NPU_310P)
    events = await collect(20, until=readings, interval=5)
    assert statuses(events) == [("npu-smi: 6 device(s)", True)]
    assert [s.npu_id for s in readings(events)[0].samples] == [0, 32, 96, 32768, 32800, 32896]


async def test_events_fill_the_model(tools):
    tools.add("npu-smi", NPU_310P)
    history = AcceleratorHistory()
    for event in await collect(20, until=lambda events: len(readings(events)) >= 2, interval=0.2):
        if isinstance(event, AcceleratorReadings):
            history.add(event.samples, event.at)
        else:
            history.set_status(event.host, event.text, event.ok, event.at)
    assert history.status["box"].ok
    assert len(history.devices("box")) == 6
    assert all(len(device.fine) >= 2 for device in history.devices("box"))
