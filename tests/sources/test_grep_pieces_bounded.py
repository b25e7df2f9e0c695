"""A big log's later grep pieces wait in their pipes, not in memory: a piece is read only once
the pieces before it are, and a million-step log's later pieces had been queued whole meanwhile
(every matching line of them, hundreds of MB). The greps here are real, over a real file."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tests.support import until
from tui.parsers.log_scanner import NEEDLES
from tui.sources.base import Lines
from tui.sources.local_file import LocalFile
from tui.sources.grep_filter import QUEUED_BATCHES, drain, grep_command, in_order, piece, piece_queue

# Every line matches: grep's output is the log's size again.
STEP = b"step:%d - actor/pg_loss:0.125 - critic/score/mean:0.5 - response_length/mean:512.0\n"


def big_log(path: Path, steps: int) -> int:
    """A log of ``steps`` step lines; its size."""
    with open(path, "wb") as log:
        for at in range(1, steps + 1, 10_000):
            log.write(b"".join(STEP % step for step in range(at, min(at + 10_000, steps + 1))))
    return path.stat().st_size


async def grep_into(log: Path, queue) -> tuple[asyncio.subprocess.Process, asyncio.Task[None]]:
    process = await asyncio.create_subprocess_exec(
        *grep_command(NEEDLES, str(log)), stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "LC_ALL": "C"})
    assert process.stdout is not None
    return process, asyncio.create_task(piece(queue, drain(process.stdout, 0, 1 << 62, queue)))


async def test_a_piece_no_one_reads_yet_holds_a_few_batches_and_its_grep_waits(tmp_path):
    log = tmp_path / "run.log"
    size = big_log(log, 600_000)  # ~50 MB of output, against QUEUED_BATCHES of ≤ 1 MiB
    first, later = piece_queue(), piece_queue()
    process, reader = await grep_into(log, later)
    await until(lambda: later.full(), timeout=20, what="the later piece's queue to fill")
    await asyncio.sleep(0.5)  # and it stays so: grep is held at its pipe, not read on
    held = sum(len(line) for batch in list(later._queue) for _, line in batch)  # noqa: SLF001
    assert later.qsize() == QUEUED_BATCHES and held <= QUEUED_BATCHES * (1 << 20) < size // 4
    assert process.returncode is None and not reader.done()
    # The first piece ends; then the later one is read in order, whole.
    first.put_nowait([(0, b"step:0 - x:1\n")])
    first.put_nowait(None)
    steps = []
    async for batch in in_order([first, later]):
        steps += [line.split(b" ", 1)[0] for _, line in batch]
    assert len(steps) == 600_001 and steps[1] == b"step:1" and steps[-1] == b"step:600000"
    assert await process.wait() == 0


async def test_a_reader_stopped_while_its_queue_is_full_ends(tmp_path):
    """The reader gone (a check interrupted), a piece waiting on its full queue is cancelled
    without waiting for room no one will make."""
    log = tmp_path / "run.log"
    big_log(log, 300_000)
    queue = piece_queue()
    process, reader = await grep_into(log, queue)
    await until(lambda: queue.full(), timeout=20, what="the queue to fill")
    reader.cancel()
    await asyncio.wait({reader}, timeout=5)
    assert reader.cancelled()
    process.kill()
    await process.communicate()


async def test_a_local_check_stopped_mid_backfill_leaves_no_grep(tmp_path):
    """A backfill whose reader stops while later pieces wait on full queues ends their greps
    (their pipes are read to the end, so waiting for them returns)."""
    log = tmp_path / "run.log"
    big_log(log, 600_000)
    source = LocalFile(log, prefilter=NEEDLES, piece_min_bytes=1 << 20, matcher="grep")
    stream = source.stream(0, follow=False)
    assert isinstance(await anext(stream), Lines)
    await asyncio.sleep(0.5)  # the later pieces' queues fill
    await asyncio.wait_for(stream.aclose(), timeout=10)
    await source.close()
    assert greps_on(log) == []  # the shells' dd and grep too, not the shells alone


def greps_on(log: Path) -> list[str]:
    """The processes still reading ``log`` (a piece's dd or grep), by their command lines."""
    left = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(log) in command and entry.name != str(os.getpid()):
            left.append(command)
    return left
