"""``rlwatch status TARGET``: one short line for tmux's ``status-right``, then exit.

    set -g status-right '#(rlwatch status /runs/cola)'

prints ``cola/train 120/200 reward 0.734 ✖ CRIT loss-nan`` and exits like
``rlwatch check`` (0 ok, 1 warning, 2 critical, 3 unreadable). tmux runs it
every ``status-interval`` seconds, so each call reads only the bytes written
since the last one (see :mod:`tui.cli.status_state`) and imports neither
Textual nor the accelerator tools. An error is printed on stdout too: stdout
is all a status bar shows.

A remote target (``gpu:/runs/cola``) keeps its state the same way and reads
only the new bytes, but each call still opens its own SSH connection: about
0.7 s against 127.0.0.1, where ``ssh host true`` takes 0.3 s and a local
status 0.16 s. What would make it as cheap as a local one is for the SSH
layer to reuse a connection across processes — OpenSSH's ControlMaster /
ControlPersist (asyncssh cannot use its socket, so an ``ssh -S`` transport for
one-shot reads), or a small per-host rlwatch process holding the connection
behind a user-only Unix socket that exits when idle — and to answer "is
this still the file whose bytes before OFFSET were T, how big is it, and
what follows OFFSET" in one remote command instead of three.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from tui.cli import exit_codes
from tui.cli.check import not_a_training_log
from tui.cli.status_state import (
    TAIL_BYTES,
    StatusState,
    context_steps,
    load_state,
    save_state,
)
from tui.cli.targets import OpenedTarget, open_target
from tui.config import load_config
from tui.parsers.text import safe_text
from tui.rules.engine import RuleEngine
from tui.model.accelerators import AcceleratorHistory
from tui.model.run_model import RunModel
from tui.rules.findings import Finding, Severity, worst_severity
from tui.rules.rule_file import RuleFileError, RuleSpec, load_rules, override_paths
from tui.session.run_mutes import RunMutes
from tui.session.feed import read_failure_blocks
from tui.session.process_reads import log_file, log_host, read_processes
from tui.session.run_session import RunSession
from tui.sources.base import Data, JobState, Lines, LogSource, SourceError
from tui.ui.glyphs import to_ascii, use_ascii
from tui.ui.run_line import run_line, run_name


def status_cache_dir() -> Path:
    """Where the per-log states are kept (platformdirs' user cache dir)."""
    from platformdirs import user_cache_path

    return user_cache_path("rlwatch") / "status"


def run_status(targets: list[str], log: str | None, rules_file: str | None = None,
               ascii_only: bool | None = None, accept_new_host_key: bool = False,
               mute: str | None = None) -> int:
    """Entry point for ``rlwatch status``; ``ascii_only`` None follows the settings and locale.
    Several targets (or a group, a glob) give the fleet's line instead of a run's."""
    from tui.cli.run_list import is_fleet

    ascii_only = use_ascii(ascii_only, load_config().ascii, os.environ)
    if is_fleet(targets):
        from tui.cli.fleet import run_status_fleet

        line, status = run_status_fleet(targets, log, rules_file, accept_new_host_key, mute)
    else:
        line, status = _one_run(targets[0], log, rules_file, accept_new_host_key, mute)
    line = safe_text(line)  # the run's name is a (remote) file name, the rest may quote the log
    print(to_ascii(line) if ascii_only else line)
    return status


def _one_run(target: str, log: str | None, rules_file: str | None,
             accept_new_host_key: bool, mute: str | None = None) -> tuple[str, int]:
    try:
        rules = load_rules(*override_paths(rules_file), mute=mute)
        opened = open_target(target, log, accept_new_host_key)
        line, worst = asyncio.run(status_line(opened, rules, status_cache_dir()))
        return line, exit_codes.for_worst(worst)
    except (SourceError, RuleFileError) as error:
        return f"rlwatch: {error}", exit_codes.UNREADABLE


async def status_line(opened: OpenedTarget, rules: list[RuleSpec], cache_dir: Path,
                      ) -> tuple[str, Severity | None]:
    """The line for the run behind ``opened`` and its worst severity, updating the kept state."""
    model, findings = await status_judged(opened, rules, cache_dir)
    return run_line(run_name(opened.source.label), model, findings), worst_severity(findings)


async def status_judged(opened: OpenedTarget, rules: list[RuleSpec], cache_dir: Path,
                        ) -> tuple[RunModel, list[Finding]]:
    """The run behind ``opened`` and its findings, from the kept state and the new bytes."""
    source = opened.source
    await source.connect()
    if source.logger_files is not None:
        return await _logger_run(source, rules)
    try:
        state = load_state(cache_dir, source.label)
        if state is None or not await _same_log(source, state):
            state = StatusState(source.label)
        now = time.time()
        await read_new(source, state, context_steps(rules), now)
        # Name a crash by its exception line: read its block once, keep what it says.
        blocks = await read_failure_blocks(state.model(), source, state.read_to, follow=True)
        state.keep(list(blocks), now, context_steps(rules))
        save_state(cache_dir, state)
        model = state.model()
        reason = not_a_training_log(model)
        if reason is not None:  # random bytes, an empty file: what check refuses, status refuses
            raise SourceError(reason)
        # The rules the user muted on this run in the dashboard are muted here too.
        engine = RuleEngine(rules, RunMutes(source.label).load())
        findings = engine.evaluate(model, now)
        # A stalled run's line says what its trainer does: one reading, on the open connection.
        if any(finding.rule == "stalled" for finding in findings) and \
                await read_processes(model, AcceleratorHistory(), log_host(source), {}, log=log_file(source)):
            findings = engine.evaluate(model, now)
    finally:
        await source.close()
    return model, findings


async def _logger_run(source: LogSource, rules: list[RuleSpec]) -> tuple[RunModel, list[Finding]]:
    """A run known only by its JSONL or event files, read whole each time.

    The kept state is a console scanner's; these files have no use for it, so
    each call reads them whole: 1,000 steps × 150 keys took 0.4–1.2 s as a JSONL
    and 5–10 s as event files on a busy 2-CPU machine. Keeping the event
    readers' places between calls, as the console state keeps its offset, is
    what would make the latter cheap.
    """
    session = RunSession(source, rules=rules)
    try:
        await session.load()
    finally:
        await session.close()
    return session.model, session.judge()


async def _same_log(source: LogSource, state: StatusState) -> bool:
    """Whether the log still holds, just before where we stopped, the bytes it held then."""
    start = max(0, state.read_to - TAIL_BYTES)
    return await source.read_range(start, state.read_to) == state.tail


async def read_new(source: LogSource, state: StatusState, context: int, now: float) -> None:
    """Feed the log from where ``state`` stopped to its current end into ``state``.

    A line without its newline yet stays in the scanner for the next call
    (``settle``, not ``finish``): it is being written. The bytes just before
    the new read position are kept from what was read, so that costs no
    extra read (a round trip, on a remote log).
    """
    scanner = state.scanner
    tail_unknown = False
    async for event in source.stream(state.read_to, follow=False):
        if isinstance(event, Data):
            state.last_write_at = max(state.last_write_at or 0.0, event.mtime or now)
            state.keep(scanner.feed(event.data), now, context)
            state.read_to = event.offset + len(event.data)
            state.tail = (state.tail + event.data)[-TAIL_BYTES:]
            tail_unknown = False
        elif isinstance(event, Lines):  # a big log's first read, pre-filtered by grep
            records = [record for offset, line in event.lines
                       for record in scanner.scan_line(line, offset)]
            scanner.skip_to(event.resume_at)
            if event.mtime is not None:  # when the newest of these old lines was written
                state.last_write_at = max(state.last_write_at or 0.0, event.mtime)
            state.keep(records, now, context)
            state.read_to, tail_unknown = event.resume_at, True
        elif isinstance(event, JobState):  # a Ray or Slurm job's state: FAILED is critical
            state.keep([event.record], now, context)
    state.keep(scanner.settle(), now, context)
    if tail_unknown:
        state.tail = await source.read_range(max(0, state.read_to - TAIL_BYTES), state.read_to)
