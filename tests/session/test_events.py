"""What the headless watcher tells: real runs read part by part, judged, turned into events once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.corpus import REPO
from tui.rules.rule_file import load_rules
from tui.session.events import Announced, run_events
from tui.session.run_session import RunSession
from tui.sources.local_file import LocalFile

GENERATED = REPO / "tests" / "fixtures" / "logs" / "generated"
# A real 2-process run (gloo) whose rank 1 raised after step 4, and a real verl run of 8 steps.
RAISED = GENERATED / "ddp" / "gloo_rank1_raise.log"
FINISHED = GENERATED / "verl" / "verl_07_console_only" / "console.log"
# A stall is said after 1 s without a step: the tests need not wait ten minutes.
QUICK_STALL = '[[rule]]\nid = "stalled"\nmin_seconds = 1.0\nfactor = 1.0\nquiet_seconds = 1.0\n'


def steps_then_crash(path: Path = RAISED) -> tuple[bytes, bytes]:
    """The log up to its crash block, and the crash block."""
    data = path.read_bytes()
    at = data.index(b"[rank1]: Traceback")
    return data[:at], data[at:]


def judged(log: Path, rules: Path | None = None, now: float | None = None) -> RunSession:
    session = RunSession(LocalFile(log), rules=load_rules(*([rules] if rules else [])),
                         watch_accelerators=False)

    async def read() -> None:
        await session.connect()
        await session.load()
        await session.close()

    asyncio.run(read())
    session.judge(now)
    return session


def events(session: RunSession, announced: Announced, now: float, **options):
    return run_events("cola", "gpu-1", session.model, session.findings, announced, now, **options)


def test_a_crash_is_told_once_with_its_exception_line_and_rank(tmp_path):
    steps, crash = steps_then_crash()
    log = tmp_path / "run.log"
    log.write_bytes(steps)
    announced = Announced()
    assert events(judged(log), announced, 100.0) == []
    log.write_bytes(steps + crash)
    session = judged(log)
    [told] = events(session, announced, 101.0)
    assert told.kind == "critical" and told.rule == "crash" and told.rank == 1
    assert told.exception == "RuntimeError: reward worker returned a malformed batch at step 5"
    assert told.line() == ("cola on gpu-1, step 4: crashed: RuntimeError: reward worker returned a "
                           "malformed batch at step 5 (rank 1 on localhost)")
    assert events(session, announced, 102.0) == []
    # What was told survives a restart (the record is kept as JSON).
    again = Announced.from_json(json.loads(json.dumps(announced.to_json())))
    assert events(judged(log), again, 103.0) == []


def test_warnings_are_told_only_when_asked(tmp_path):
    steps, _ = steps_then_crash()
    log = tmp_path / "run.log"
    log.write_bytes(steps)
    told = events(judged(log), Announced(), 100.0, warnings=True)
    assert [(e.kind, e.rule) for e in told] == [("warning", "grad-high")]
    assert "train/grad_norm" in told[0].what


def test_a_stall_is_told_with_its_step_and_then_that_the_run_moves_again(tmp_path):
    steps, _ = steps_then_crash()
    lines = steps.splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if line.startswith(b"step:"))
    rules = tmp_path / "rules.toml"
    rules.write_text(QUICK_STALL)
    log = tmp_path / "run.log"
    log.write_bytes(b"".join(lines[:last]))
    announced = Announced()
    session = judged(log, rules)
    later = session.model.last_step_at + 30
    session.judge(later)
    [stall] = events(session, announced, later)
    assert stall.kind == "critical" and stall.rule == "stalled" and stall.step == 3
    assert "after step 3" in stall.what and "30 s" in stall.what
    session.judge(later + 5)
    assert events(session, announced, later + 5) == []  # the same stall, longer: not news
    log.write_bytes(b"".join(lines))
    session = judged(log, rules)
    [moving] = events(session, announced, session.model.last_step_at + 0.1)
    assert moving.kind == "moving" and moving.step == 4


def test_a_stall_is_told_with_the_phase_it_stopped_in(tmp_path):
    """A real run whose checkpoint write blocked (tests/fixtures/logs/generated/hangs): the
    notification names the save, its line and the schedule, read as the watcher reads it."""
    log = tmp_path / "run.log"
    log.write_bytes((REPO / "tests/fixtures/logs/generated/hangs/save_blocked_at_step8_still_hanging.log").read_bytes())
    session = judged(log)
    later = session.model.last_step_at + 3600
    session.judge(later)
    [stall] = events(session, Announced(), later)
    assert stall.what.startswith("stalled: no new step for 1 h 00 min after step 7 (typical step under 1 s), saving a checkpoint;")
    assert "/global_step_8` (at byte 1,794)" in stall.what
    assert "step 8 saves a checkpoint (trainer.save_freq=4)" in stall.what


def test_a_crashed_run_is_not_also_told_as_stalled(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(QUICK_STALL)
    session = judged(RAISED, rules)
    session.judge(session.model.last_step_at + 3600)
    told = events(session, Announced(), session.model.last_step_at + 3600)
    assert [e.rule for e in told] == ["crash"]


def test_a_finished_run_is_told_with_the_reports_verdict():
    session = judged(FINISHED)
    announced = Announced()
    told = events(session, announced, 100.0)
    assert [e.kind for e in told] == ["finished"]
    assert told[0].what.startswith("finished at step 8/8; val-core/openai/gsm8k/acc/mean@1 0.875; ")
    assert events(session, announced, 200.0) == []


def test_a_run_that_stays_critical_is_recalled_at_most_every_remind_interval(tmp_path):
    announced = Announced()
    session = judged(RAISED)
    assert [e.kind for e in events(session, announced, 0.0, remind_s=3600)] == ["critical"]
    assert events(session, announced, 3599.0, remind_s=3600) == []
    [reminder] = events(session, announced, 3600.0, remind_s=3600)
    assert reminder.kind == "reminder" and reminder.what.startswith("still crashed: crashed: RuntimeError")
    assert events(session, announced, 3700.0, remind_s=3600) == []


def test_log_text_in_an_event_is_neutralised(tmp_path):
    steps, crash = steps_then_crash()
    hostile = crash.replace(b"RuntimeError: reward worker", b"RuntimeError: \x1b]0;owned\x07reward \x1b[2Jworker")
    log = tmp_path / "run.log"
    log.write_bytes(steps + hostile)
    [told] = events(judged(log), Announced(), 100.0)
    for text in (told.line(), told.exception or "", json.dumps(told.to_json(), ensure_ascii=False)):
        assert "\x1b" not in text and "\x07" not in text
    assert "owned" in told.line()


def test_a_damaged_record_is_forgotten_not_fatal():
    assert Announced.from_json({"findings": [1, 2]}) == Announced()
    assert Announced.from_json({"unknown": True}) == Announced()
    assert Announced.from_json([]) == Announced()


def read_blocks(model, log: Path) -> None:
    """Read the failure blocks ``model`` knows only by their first line, from ``log``."""
    from tui.session.feed import read_failure_blocks

    source = LocalFile(log)

    async def read() -> None:
        await source.connect()
        await read_failure_blocks(model, source, log.stat().st_size, follow=False)
        await source.close()

    asyncio.run(read())


def test_a_crash_whose_block_is_not_read_yet_waits_for_its_exception_line(tmp_path):
    """Over SSH a crash is known by its first line before its block is fetched: told with its
    exception line once the block is read, not with "Traceback (most recent call last):"."""
    from tui.model.run_model import RunModel
    from tui.parsers.log_scanner import LogScanner
    from tui.rules.engine import RuleEngine
    from tui.session.events import BLOCK_WAIT_S

    log = tmp_path / "run.log"
    log.write_bytes(RAISED.read_bytes())
    model = RunModel()
    model.apply(LogScanner().feed(log.read_bytes()), 0.0)  # the lines, no block read yet
    assert model.unread_failures()
    engine = RuleEngine(load_rules())
    announced = Announced()
    assert run_events("cola", "gpu-1", model, engine.evaluate(model, 1.0), announced, 1.0) == []
    read_blocks(model, log)
    [told] = run_events("cola", "gpu-1", model, engine.evaluate(model, 2.0), announced, 2.0)
    assert told.exception == "RuntimeError: reward worker returned a malformed batch at step 5"
    assert announced.waiting == {}
    # A block never read (cut short, say) is told anyway, after BLOCK_WAIT_S.
    unread = RunModel()
    unread.apply(LogScanner().feed(log.read_bytes()), 0.0)
    late = Announced()
    findings = RuleEngine(load_rules()).evaluate(unread, 1.0)
    assert run_events("cola", "gpu-1", unread, findings, late, 1.0 + BLOCK_WAIT_S - 0.1) == []
    assert late.told_by() == 1.0 + 2 * BLOCK_WAIT_S - 0.1  # when a watcher judges the run again
    [told] = run_events("cola", "gpu-1", unread, findings, late, 1.0 + 2 * BLOCK_WAIT_S)
    assert told.kind == "critical" and told.rule == "crash" and told.exception == "Traceback (most recent call last):"
    assert late.told_by() is None
    # A block read as harmless leaves no crash: nothing is left waiting for it (nor woken for).
    harmless = Announced()
    assert run_events("cola", "gpu-1", unread, findings, harmless, 1.0) == [] and harmless.told_by() is not None
    assert run_events("cola", "gpu-1", unread, [], harmless, 1.5) == [] and harmless.told_by() is None
    # Its exception line read later still (a log arriving in pieces seconds apart): told again,
    # once, as what explains the crash told before.
    read_blocks(unread, log)
    read_late = RuleEngine(load_rules()).evaluate(unread, 9.0)
    [explained] = run_events("cola", "gpu-1", unread, read_late, late, 9.0)
    assert explained.kind == "explained" and explained.rank == 1
    assert explained.exception == "RuntimeError: reward worker returned a malformed batch at step 5"
    assert run_events("cola", "gpu-1", unread, read_late, late, 10.0) == []
