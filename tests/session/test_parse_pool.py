"""Worker processes that parse runs' backfills: the model they make is the one the event loop
would make, batch after batch, and they end with the pool (or stand in for a worker lost)."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
from pathlib import Path

import pytest

from tests.corpus import verl_log
from tests.e2e.test_fleet_tmux import alive, descendants
from tests.model.test_step_columns import model_state
from tests.support import until
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import NEEDLES, LogScanner
from tui.session.feed import Feed
from tui.session.parse_pool import Batch, ParsePool, scan_batch
from tui.sources.local_file import LocalFile

GENERATED_TRL = Path("tests/fixtures/logs/generated/trl")
CRASH = "tests/fixtures/logs/crashes/easyr1_9_driver_nested_raytaskerror_outofmemoryerror_tqdm_glued_lines.log"


def real_log() -> bytes:
    """A whole real run (1,120 steps, its bars) and then a real crash: steps, tracebacks, bars."""
    with open(CRASH, "rb") as crash:
        return verl_log("032").read_bytes() + crash.read()


def picked_lines(data: bytes) -> list[tuple[int, bytes]]:
    """The lines a box's grep sends for ``data``: those with a needle, with their offsets."""
    lines, offset = [], 0
    for line in data.splitlines(keepends=True):
        if any(needle in line for needle in NEEDLES):
            lines.append((offset, line))
        offset += len(line)
    return lines


def folded(batches: list[Batch], scan) -> dict:
    """The model ``batches`` make, each scanned by ``scan`` from the scanner the last left."""
    model, scanner = RunModel(), LogScanner()
    for batch in batches:
        scanner, records = scan(scanner, batch)
        model.apply(records, 1.0)
    model.apply(scanner.finish(), 1.0)
    return model_state(model)


def thirds(items):
    third = len(items) // 3
    return [items[:third], items[third:2 * third], items[2 * third:]]


@pytest.fixture(params=["fork", "forkserver"])
async def pool(request):
    made = ParsePool(workers=1, start_method=request.param)
    made.start()
    yield made
    made.close()


async def in_pool(pool: ParsePool, batches: list[Batch]) -> dict:
    model, scanner = RunModel(), LogScanner()
    for batch in batches:
        scanner, records = await pool.scan(scanner, batch)
        model.apply(records, 1.0)
    model.apply(scanner.finish(), 1.0)
    return model_state(model)


async def test_a_remote_grep_s_lines_in_three_batches_make_the_model_the_loop_would(pool):
    batches: list[Batch] = thirds(picked_lines(real_log()))
    expected = folded(batches, scan_batch)
    assert len(expected["index"][0]) == 1120 and expected["marks"][4]  # steps, some again; failures
    assert await in_pool(pool, batches) == expected


async def test_a_local_log_s_bytes_cut_anywhere_make_the_same_model(pool):
    data = real_log()
    cut = [data[:700_001], data[700_001:1_400_003], data[1_400_003:]]  # mid-line
    assert await in_pool(pool, cut) == folded([data], scan_batch)


@pytest.mark.parametrize("name", ["grpo_finished.log", "grpo_rotated_append.log"])
async def test_a_buffered_trainers_dicts_held_across_batches_come_back_numbered_alike(pool, name):
    """The HF Trainer's grammar holds a burst of buffered dicts until its bar moves on: that
    state travels with the scanner to the worker and back, batch after batch."""
    data = (GENERATED_TRL / name).read_bytes()
    third = len(data) // 3
    cut = [data[:third], data[third:2 * third], data[2 * third:]]
    expected = folded([data], scan_batch)
    assert len(expected["index"][0]) > 1
    assert await in_pool(pool, cut) == expected


async def test_a_feed_with_a_pool_reads_a_log_as_one_without(pool, tmp_path):
    log = tmp_path / "train.log"
    log.write_bytes(real_log())
    alone, pooled = RunModel(), RunModel()
    await Feed(LocalFile(log), alone, clock=lambda: 1.0).run(follow=False)
    await Feed(LocalFile(log), pooled, clock=lambda: 1.0, pool=pool).run(follow=False)
    assert model_state(pooled) == model_state(alone)


async def test_a_worker_killed_mid_fleet_leaves_the_batches_to_a_thread_here(pool):
    batches: list[Batch] = thirds(picked_lines(real_log()))
    await pool.scan(LogScanner(), batches[0])  # the workers are up
    for worker in descendants(os.getpid()) & set(pool._executor._processes):
        os.kill(worker, signal.SIGKILL)
    assert await in_pool(pool, batches) == folded(batches, scan_batch)


async def test_ctrl_c_is_the_apps_a_worker_goes_on(pool):
    await pool.scan(LogScanner(), b"")
    for worker in pool._executor._processes:
        os.kill(worker, signal.SIGINT)
    await asyncio.sleep(0.2)
    batches: list[Batch] = [picked_lines(real_log())]
    assert await in_pool(pool, batches) == folded(batches, scan_batch)


async def test_a_workers_inherited_heap_is_out_of_the_collectors_reach(pool):
    frozen = await asyncio.wrap_future(pool._executor.submit(gc.get_freeze_count))
    assert frozen > 1000  # the parser's modules at least, whichever way the worker started


@pytest.mark.parametrize("start_method", ["fork", "forkserver"])
async def test_closing_the_pool_ends_its_workers(start_method):
    pool = ParsePool(workers=2, start_method=start_method)
    pool.start()
    await pool.scan(LogScanner(), b"step:1 - a:1\n")
    workers = set(pool._executor._processes)
    assert len(alive(workers)) == 2
    pool.close()
    await until(lambda: not alive(workers))


async def test_a_retired_pool_ends_its_workers_and_scans_what_comes_after_in_a_thread(pool):
    batches: list[Batch] = thirds(picked_lines(real_log()))
    model, scanner = RunModel(), LogScanner()
    scanner, records = await pool.scan(scanner, batches[0])
    model.apply(records, 1.0)
    workers = descendants(os.getpid()) & set(pool._executor._processes)
    assert alive(workers)
    pool.retire()
    await until(lambda: not alive(workers))
    for batch in batches[1:]:
        scanner, records = await pool.scan(scanner, batch)
        model.apply(records, 1.0)
    model.apply(scanner.finish(), 1.0)
    assert model_state(model) == folded(batches, scan_batch)
