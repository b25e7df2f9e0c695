"""The local command runner: real subprocesses, clear failures, streams that stop their process."""

import asyncio
import os

import pytest

from tests.sources.accelerators.conftest import H100_MIG, NO_DRIVER
from tui.sources.accelerators.runner import CommandFailed, LocalRunner, ToolMissing


async def test_run_returns_stdout(tools):
    tools.add("nvidia-smi", H100_MIG)
    out = await LocalRunner().run(["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"])
    assert out == b"0, NVIDIA H100 80GB HBM3\n"


async def test_missing_program(tools):
    with pytest.raises(ToolMissing) as caught:
        await LocalRunner().run(["nvidia-smi", "-L"])
    assert caught.value.tool == "nvidia-smi"


async def test_failure_keeps_the_output_and_status(tools):
    tools.add("nvidia-smi", NO_DRIVER)
    with pytest.raises(CommandFailed) as caught:
        await LocalRunner().run(["nvidia-smi", "--query-gpu=index", "--format=csv"])
    assert caught.value.returncode == 9
    assert b"couldn't communicate with the NVIDIA driver" in caught.value.output


async def test_shell_not_found_status_means_missing():
    with pytest.raises(ToolMissing):
        await LocalRunner().run(["sh", "-c", "exit 127"])


async def test_timeout_kills_the_program():
    with pytest.raises(CommandFailed, match="did not answer within 0.2 s"):
        await LocalRunner().run(["sleep", "30"], timeout=0.2)


async def test_stream_yields_lines_as_they_come_and_stops_the_program():
    stream = LocalRunner().stream_lines(["sh", "-c", "echo $$; while true; do echo row; sleep 0.1; done"])
    pid = int(await anext(stream))
    assert [await anext(stream) for _ in range(3)] == [b"row"] * 3
    await stream.aclose()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped


async def test_stream_that_fails_raises_after_its_lines(tools):
    tools.add("nvidia-smi", {**H100_MIG, **NO_DRIVER, "rows_then_fail": 2})
    lines = []
    with pytest.raises(CommandFailed) as caught:
        async for line in LocalRunner().stream_lines(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader",
                                                      "-l", "1"]):
            lines.append(line)
    assert lines[:2] == [b"0", b"0"]
    assert caught.value.returncode == 9
    assert b"NVIDIA driver" in caught.value.output


async def test_stream_of_a_missing_program(tools):
    with pytest.raises(ToolMissing):
        async for _ in LocalRunner().stream_lines(["npu-smi", "info"]):
            pass


async def test_concurrent_runs_do_not_mix():
    outputs = await asyncio.gather(*(LocalRunner().run(["sh", "-c", f"echo {n}"]) for n in range(8)))
    assert outputs == [f"{n}\n".encode() for n in range(8)]
