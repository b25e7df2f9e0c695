"""Following a local log: growth, truncation, replacement, unreadable paths."""

import asyncio
import os

import pytest

from tui.sources.base import Data, Reset, SourceError
from tui.sources.local_file import LocalFile


async def collect(source, start=0, follow=False, until=None, timeout=5.0):
    events = []

    async def run():
        async for event in source.stream(start, follow):
            events.append(event)
            if until is not None and until(events):
                return

    await asyncio.wait_for(run(), timeout)
    return events


async def test_reads_from_an_offset_to_the_end(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(b"0123456789")
    events = await collect(LocalFile(log), start=4)
    assert events == [Data(4, b"456789")]


async def test_appended_bytes_arrive_while_following(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(b"first\n")
    source = LocalFile(log, poll_seconds=0.02)
    got = []

    async def follow():
        async for event in source.stream(0, follow=True):
            got.append(event)
            if len(got) == 2:
                return

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.1)
    with open(log, "ab") as handle:
        handle.write(b"second\n")
    await asyncio.wait_for(task, 5)
    assert got == [Data(0, b"first\n"), Data(6, b"second\n")]


@pytest.mark.parametrize("how", ["truncate", "replace"])
async def test_truncation_and_replacement_are_noticed_and_reread(tmp_path, how):
    log = tmp_path / "run.log"
    log.write_bytes(b"old line one\nold line two\n")
    source = LocalFile(log, poll_seconds=0.02)
    events = []

    async def follow():
        async for event in source.stream(0, follow=True):
            events.append(event)
            if isinstance(event, Data) and event.data == b"new\n":
                return

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.1)
    if how == "truncate":
        with open(log, "wb") as handle:
            handle.write(b"new\n")
    else:
        fresh = tmp_path / "run.log.tmp"
        fresh.write_bytes(b"new\n")
        os.replace(fresh, log)
    await asyncio.wait_for(task, 5)
    reset = [e for e in events if isinstance(e, Reset)]
    assert len(reset) == 1 and ("truncated" if how == "truncate" else "replaced") in reset[0].reason
    assert events[-1] == Data(0, b"new\n")


async def test_range_reads(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(b"abcdefgh")
    assert await LocalFile(log).read_range(2, 5) == b"cde"


async def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(SourceError, match="no such file"):
        await LocalFile(tmp_path / "absent.log").connect()


async def test_directory_is_a_clear_error(tmp_path):
    with pytest.raises(SourceError, match="is a directory"):
        await LocalFile(tmp_path).connect()
