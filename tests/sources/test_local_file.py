"""Following a local log: growth, truncation, replacement, unreadable paths."""

import asyncio
import os
import time

import pytest

from tests.corpus import REPO
from tui.parsers.log_scanner import NEEDLES, LogScanner
from tui.parsers.records import StepRecord
from tui.sources.base import CaughtUp, Data, Lines, Reset, SourceError
from tui.sources.local_file import LocalFile


def plain(events) -> list[tuple[int, bytes]]:
    """The (offset, bytes) of the Data events, without their mtime."""
    return [(e.offset, e.data) for e in events if isinstance(e, Data)]


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
    assert plain(events) == [(4, b"456789")]
    assert events[0].mtime == log.stat().st_mtime


async def test_appended_bytes_arrive_while_following(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(b"first\n")
    source = LocalFile(log, poll_seconds=0.02)
    got = []

    async def follow():
        async for event in source.stream(0, follow=True):
            got.append(event)
            if len(plain(got)) == 2:
                return

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.1)
    with open(log, "ab") as handle:
        handle.write(b"second\n")
    await asyncio.wait_for(task, 5)
    assert plain(got) == [(0, b"first\n"), (6, b"second\n")]
    assert any(isinstance(e, CaughtUp) for e in got)  # it said when it had read everything


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
    assert plain(events[-1:]) == [(0, b"new\n")]


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


# -- the grep backfill of big logs ------------------------------------------

from tests.corpus import verl_log  # noqa: E402
from tui.model.run_model import RunModel  # noqa: E402
from tui.session.feed import Feed  # noqa: E402


async def load(source) -> RunModel:
    model = RunModel()
    await Feed(source, model).run(follow=False)
    return model


@pytest.mark.parametrize(("matcher", "piece_min_bytes"),
                         [("grep", 1 << 30), ("grep", 4096), ("hyperscan", 0)],
                         ids=["one grep", "a grep per cpu", "hyperscan"])
@pytest.mark.parametrize("prefix", ["031", "032", "034", "009", "025", "008", "018"])
async def test_prefiltered_backfill_builds_the_same_model_as_reading_everything(
        prefix, matcher, piece_min_bytes):
    path = verl_log(prefix)
    whole = await load(LocalFile(path))
    filtered = await load(LocalFile(path, prefilter=NEEDLES, grep_min_bytes=0,
                                    piece_min_bytes=piece_min_bytes, matcher=matcher))
    assert repr(filtered.latest()) == repr(whole.latest())
    assert filtered.step_index.ends == whole.step_index.ends
    assert [i.offset for i in filtered.incidents] == [i.offset for i in whole.incidents]
    assert filtered.sample_offsets == whole.sample_offsets
    assert filtered.progress == whole.progress
    assert filtered.crash_blocks == whole.crash_blocks


@pytest.mark.parametrize("matcher", ["grep", "hyperscan"])
async def test_prefiltered_backfill_stops_at_the_last_whole_line_and_following_goes_on(tmp_path, matcher):
    log = tmp_path / "run.log"
    log.write_bytes(b"chatter\nstep:1 - a:1\nstep:2 - a:")  # step 2 still being written
    events = await collect(LocalFile(log, prefilter=NEEDLES, grep_min_bytes=0, matcher=matcher))
    lines = [e for e in events if isinstance(e, Lines)]
    assert lines[-1].resume_at == 21
    assert [offset for e in lines for offset, _ in e.lines] == [8]
    assert plain(events[-1:]) == [(21, b"step:2 - a:")]


async def test_a_grep_backfilled_log_says_how_old_its_lines_are(tmp_path):
    # Ending with a whole line, nothing follows the backfill: only the Lines can say the
    # log's age, and a log untouched for two hours looked a few seconds old.
    log = tmp_path / "run.log"
    log.write_bytes(b"chatter\nstep:1 - a:1 - timing_s/step:2\nstep:2 - a:1 - timing_s/step:2\n")
    two_hours_ago = time.time() - 7200
    os.utime(log, (two_hours_ago, two_hours_ago))
    model = await load(LocalFile(log, prefilter=NEEDLES, grep_min_bytes=0))
    assert model.last_step == 2 and abs(model.last_step_at - two_hours_ago) < 1


async def test_a_big_backfill_arrives_slice_after_slice_in_file_order(tmp_path):
    # The session parses the first slices while the rest are scanned: several Lines events,
    # their offsets rising, every step line once.
    log = tmp_path / "run.log"
    log.write_bytes(b"".join(b"chatter %d\nstep:%d - a:1\n" % (i, i) for i in range(2000)))
    events = await collect(LocalFile(log, prefilter=NEEDLES, grep_min_bytes=0, matcher="hyperscan"))
    batches = [e.lines for e in events if isinstance(e, Lines)]
    offsets = [offset for batch in batches for offset, _ in batch]
    assert len(batches) > 1
    assert offsets == sorted(offsets) and len(offsets) == 2000


# verl's step lines, as a real run printed them (tests/fixtures/logs/generated).
VERL_STEPS = [line for line in (REPO / "tests/fixtures/logs/generated/verl/verl_07_console_only/console.log")
              .read_bytes().split(b"\n") if line.startswith(b"step:") or b"]step:" in line]


def copytruncated(path, hole_mib: int) -> None:
    """What logrotate's copytruncate leaves under a writer that keeps its offset: the log
    emptied, then the writer's next lines written where it was, past a hole of NULs (a real
    sparse file: truncate, then seek and write)."""
    with open(path, "wb") as handle:
        handle.write(VERL_STEPS[1] + b"\n")
        handle.truncate(0)
        handle.seek(hole_mib << 20)
        handle.write(VERL_STEPS[3] + b"\n" + VERL_STEPS[4] + b"\n")


async def scanned_steps(source: LocalFile) -> list[tuple[int, int]]:
    """(step, offset) of every step the scanner reads from ``source``, as ``check`` reads it."""
    scanner, records = LogScanner(), []
    for event in await collect(source, timeout=60):
        if isinstance(event, Data):
            records += scanner.feed(event.data)
        elif isinstance(event, Lines):
            records += [record for offset, line in event.lines for record in scanner.scan_line(line, offset)]
            scanner.skip_to(event.resume_at)
    return [(r.step, r.offset) for r in records + scanner.finish() if isinstance(r, StepRecord)]


# 17 MiB is read in chunks; 40 MiB is past the grep/Hyperscan threshold and Hyperscan's
# longest line (32 MiB).
@pytest.mark.parametrize("hole_mib, matcher", [(17, "grep"), (40, "grep"), (40, "hyperscan")])
async def test_the_step_after_a_hole_over_16_mib_is_read(tmp_path, hole_mib, matcher):
    if matcher == "hyperscan":
        pytest.importorskip("hyperscan")
    log = tmp_path / "run.log"
    copytruncated(log, hole_mib)
    assert log.stat().st_blocks * 512 < 1 << 20  # a real hole, not written NULs
    found = await scanned_steps(LocalFile(log, prefilter=NEEDLES, matcher=matcher))
    at = hole_mib << 20
    assert found == [(3, at), (4, at + len(VERL_STEPS[3]) + 1)]


def short_step(step: int) -> bytes:
    """A verl step line of 74 bytes: three make a 222-byte log."""
    return (f"step:{step} - critic/score/mean:0.5 - actor/pg_loss:0.01 - timing_s/step:2.0".ljust(73)
            + "\n").encode()


async def follow_into_model(log, change, poll_seconds: float = 0.3) -> tuple[list[int], list[str]]:
    """The steps a model fed by a follower of ``log`` holds once ``change()`` ran between two of
    its polls (and the notices it gave)."""
    from tests.support import until
    from tui.model.run_model import RunModel
    from tui.session.feed import Feed

    model, notices = RunModel(), []
    task = asyncio.create_task(Feed(LocalFile(log, poll_seconds=poll_seconds), model,
                                    on_status=lambda event: notices.append(event.reason)
                                    if isinstance(event, Reset) else None).run(follow=True))
    try:
        await until(lambda: model.step_count == 3)
        await asyncio.sleep(poll_seconds / 2)
        change()
        await asyncio.sleep(4 * poll_seconds)
        return list(model.series["critic/score/mean"].steps), notices
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_log_rewritten_longer_in_one_write_between_two_polls_is_read_anew(tmp_path):
    """Emptied and written past the offset read so far before the next poll: the size alone
    says "grew", so the new run's first steps were lost and the old ones kept."""
    log = tmp_path / "run.log"
    log.write_bytes(b"".join(short_step(step) for step in (1, 2, 3)))
    assert log.stat().st_size == 222
    new = b"".join(short_step(step) for step in range(50, 56))[:600]

    steps, notices = await follow_into_model(log, lambda: log.write_bytes(new))
    assert steps == [50, 51, 52, 53, 54, 55][:new.count(b"\n")]
    assert notices == [f"{log} was truncated; reading it again from the start"]


async def test_a_log_rewritten_with_the_same_first_lines_is_read_anew(tmp_path):
    """A restarted run prints the same command and config first: its last bytes tell it apart."""
    log = tmp_path / "run.log"
    preamble = b"".join(f"config line {n}: the same for both runs\n".encode() for n in range(200))
    log.write_bytes(preamble + b"".join(short_step(step) for step in (1, 2, 3)))
    new = preamble + b"".join(short_step(step) for step in range(50, 60))

    steps, notices = await follow_into_model(log, lambda: log.write_bytes(new))
    assert steps == list(range(50, 60))
    assert notices == [f"{log} was truncated; reading it again from the start"]


async def test_an_appended_log_is_not_read_anew(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(b"".join(short_step(step) for step in (1, 2, 3)))

    def append() -> None:
        with open(log, "ab") as handle:
            handle.write(short_step(4))

    steps, notices = await follow_into_model(log, append)
    assert (steps, notices) == ([1, 2, 3, 4], [])
