"""Each tool's poller against a fake tool replaying recorded real output."""

import asyncio
import time
from contextlib import aclosing

import pytest

from tests.parsers.smi.corpus_files import smi
from tests.sources.accelerators.conftest import (
    AMD_SMI_R9700,
    H100_MIG,
    H100_REAL,
    NO_DRIVER,
    NPU_310P,
    ROCM_MI100,
)
from tui.parsers.smi.records import SmiFormatError
from tui.sources.accelerators.amd_smi import amd_smi_poller
from tui.sources.accelerators.detect import describe
from tui.sources.accelerators.npu_smi import NpuSmiPoller
from tui.sources.accelerators.nvidia_smi import NvidiaSmiPoller
from tui.sources.accelerators.rocm_smi import rocm_smi_poller
from tui.sources.accelerators.runner import CommandFailed, LocalRunner

UUID = "GPU-e431363e-4b57-b4dd-d319-019caf935337"


async def first_batches(poller, count: int) -> list:
    """The first ``count`` readings ``poller.follow()`` yields; the follower is closed after."""
    batches = []
    async with aclosing(poller.follow()) as readings:
        async for batch in readings:
            batches.append(batch)
            if len(batches) == count:
                break
    return batches


async def test_nvidia_smi_read_once_attaches_processes_by_uuid(tools):
    tools.add("nvidia-smi", H100_MIG)
    (gpu,) = await NvidiaSmiPoller(LocalRunner()).read_once()
    assert (gpu.name, gpu.util_pct, gpu.mem_used_mib, gpu.power_w) == ("NVIDIA H100 80GB HBM3", None, 11125, 433.78)
    assert [(p.pid, p.mem_used_mib) for p in gpu.processes] == [(21180, 2296), (21181, 1272), (21198, 7484)]


async def test_nvidia_smi_follow_streams_one_process_not_one_per_second(tools):
    tools.add("nvidia-smi", H100_REAL)
    poller = NvidiaSmiPoller(LocalRunner(), interval=1, process_interval=0.2)
    await poller.read_once()
    started = time.monotonic()
    rows = [gpu for batch in await first_batches(poller, 3) for gpu in batch]  # one GPU a batch
    assert time.monotonic() - started < 4  # rows come every second from the one -l 1 process
    assert {(gpu.uuid, gpu.util_pct, gpu.mem_used_mib, gpu.power_w) for gpu in rows} == {(UUID, 100, 17485, 696.73)}
    assert [p.name for p in rows[-1].processes] == ["/opt/torch/.venv/bin/python3"]


async def test_nvidia_smi_stream_that_dies_says_why(tools):
    tools.add("nvidia-smi", {**H100_REAL, **NO_DRIVER, "rows_then_fail": 2})
    poller = NvidiaSmiPoller(LocalRunner(), interval=1)
    rows = []
    with pytest.raises(CommandFailed) as caught:
        async for batch in poller.follow():
            rows.extend(batch)
    assert len(rows) == 2
    assert describe("nvidia-smi", caught.value).startswith("nvidia-smi: cannot talk to the NVIDIA driver")


async def test_nvidia_smi_stream_of_error_lines_is_a_format_error(tools):
    # A stream that keeps running but prints the recorded driver error instead of rows.
    script = tools.bin_dir / "nvidia-smi"
    script.write_text(f"#!/bin/sh\nwhile true; do cat {smi('015')}; echo; done\n")
    script.chmod(0o755)
    with pytest.raises(SmiFormatError, match="^nvidia-smi: cannot talk to the NVIDIA driver"):
        async with aclosing(NvidiaSmiPoller(LocalRunner(), interval=1).follow()) as rows:
            async for _ in rows:
                pass


async def test_npu_smi_310p_gets_board_power_from_the_mcu_block(tools):
    tools.add("npu-smi", NPU_310P)
    chips = await NpuSmiPoller(LocalRunner()).read_once()
    assert [chip.npu_id for chip in chips] == [0, 32, 96, 32768, 32800, 32896]
    assert {chip.power_w for chip in chips} == {45.2}  # the table says NA; -t common's mcu block has it
    assert chips[0].mem_used_mib == 1851 and chips[0].mem_total_mib == 21527


async def test_npu_smi_board_power_is_asked_at_the_slow_pace(tools):
    tools.add("npu-smi", NPU_310P)
    poller = NpuSmiPoller(LocalRunner(), interval=0.01, detail_interval=60)
    await poller.read_once()
    tools.remove("npu-smi")
    tools.add("npu-smi", {"replies": {"info": NPU_310P["replies"]["info"]}})  # -t common would now fail
    chips = await poller.read_once()
    assert {chip.power_w for chip in chips} == {45.2}  # the earlier reading is kept until it is due


async def test_rocm_smi_polled(tools):
    tools.add("rocm-smi", ROCM_MI100)
    poller = rocm_smi_poller(LocalRunner(), interval=0.05)
    readings = await first_batches(poller, 2)
    assert [[card.temp_c for card in batch] for batch in readings] == [[53, 55, 54, 51]] * 2


async def test_amd_smi_table_polled(tools):
    tools.add("amd-smi", AMD_SMI_R9700)
    poller = amd_smi_poller(LocalRunner(), interval=0.05)
    readings = await first_batches(poller, 2)
    assert [[(card.index, card.temp_c, card.mem_used_mib) for card in batch] for batch in readings] == [
        [(0, 79, 29777), (1, 80, 29777)]] * 2
    assert [len(card.processes) for card in readings[0]] == [4, 4]


async def test_pollers_stop_their_programs_when_cancelled(tools):
    tools.add("nvidia-smi", H100_REAL)

    async def consume():
        async with aclosing(NvidiaSmiPoller(LocalRunner(), interval=1).follow()) as rows:
            async for _ in rows:
                pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(1.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    done = await asyncio.create_subprocess_exec("pgrep", "-f", str(tools.bin_dir / "nvidia-smi"),
                                                stdout=asyncio.subprocess.PIPE)
    assert (await done.communicate())[0] == b""
