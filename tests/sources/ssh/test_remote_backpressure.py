"""A remote backfill is read as it is used: when rlwatch falls behind (a fleet's parse workers
busy, a slow machine), the channel stops and the box's grep waits, rather than every matching
line of a big log piling up in memory here."""

from __future__ import annotations

import asyncio
import tracemalloc

from tests.sources.test_grep_pieces_bounded import big_log
from tui.parsers.log_scanner import NEEDLES
from tui.sources.base import Lines
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget


async def test_a_backfill_not_read_on_holds_no_more_than_the_channels_window(client_home, tmp_path):
    log = tmp_path / "run.log"
    size = big_log(log, 600_000)  # every line matches: ~50 MB of grep output
    source = RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES)
    await source.connect()
    stream = source.stream(0, follow=False)
    try:
        tracemalloc.start()
        steps = sum(len(event.lines) for event in [await anext(stream)] if isinstance(event, Lines))
        await asyncio.sleep(1.5)  # the reader falls behind; the box could send it all meanwhile
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert held < 16 << 20 < size // 3, held
        async for event in stream:  # and then every line comes, once
            if isinstance(event, Lines):
                steps += len(event.lines)
        assert steps == 600_000
    finally:
        tracemalloc.stop()
        await stream.aclose()
        await source.close()
