"""``rlwatch check TARGET``: read the run once, report, exit like a monitoring plugin."""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from tui.cli import exit_codes
from tui.cli.targets import local_run_dir, open_target
from tui.durations import word_duration
from tui.model.aliases import DASHBOARD_CONCEPTS
from tui.model.run_model import RunModel
from tui.parsers.records import JobRecord
from tui.parsers.text import safe_data, safe_text
from tui.parsers.values import format_value
from tui.rules.eta import NO_ETA, eta_s, overdue_words
from tui.rules.process_activity import run_processes
from tui.rules.stall_phase import phase_allowance
from tui.rules.findings import Finding, worst_severity
from tui.rules.rule_file import RuleFileError, RuleSpec, load_rules, override_paths
from tui.rules.run_state import RunState, run_state
from tui.session.run_mutes import RunMutes
from tui.session.run_session import RunSession
from tui.sources.base import SourceError

if TYPE_CHECKING:
    from tui.cli.head_start import HeadStart
    from tui.sources.ssh.pool import ConnectionPool


@asynccontextmanager
async def loaded_run(target: str, log: str | None, accept_new_host_key: bool = False,
                     rules: list[RuleSpec] | None = None, accelerators: bool = False,
                     pool: ConnectionPool | None = None,
                     head: HeadStart | None = None) -> AsyncIterator[RunSession]:
    """A session on ``target``, read once to its current end (with ``accelerators``, one
    reading of its host's devices too); its source stays open inside the block for range
    reads (samples, step text). What the user should know goes to stderr. ``pool``: the
    SSH connections several runs share; ``head``: the target's source, made and connecting
    since before this module was imported (``tui.cli.head_start``)."""
    opened = head.opened if head is not None else open_target(target, log, accept_new_host_key, pool=pool)
    session = RunSession(opened.source, rules=rules, run_dir=local_run_dir(target), note=opened.note,
                         accept_new_host_key=accept_new_host_key,
                         mutes=RunMutes(opened.source.label) if rules is not None else None)
    try:
        note = await session.connect(head.connecting if head is not None else None)
        if note:
            print(f"rlwatch: {note}", file=sys.stderr)
        for line in await session.load(accelerators):
            print(f"rlwatch: {line}", file=sys.stderr)
        yield session
    finally:
        await session.close()


async def load(target: str, log: str | None, accept_new_host_key: bool = False) -> RunModel:
    """Read a target to its current end into a fresh model."""
    async with loaded_run(target, log, accept_new_host_key) as session:
        return session.model


async def judged(target: str, log: str | None, accept_new_host_key: bool,
                 rules: list[RuleSpec], pool: ConnectionPool | None = None,
                 head: HeadStart | None = None) -> RunSession:
    """A session on ``target`` read once and judged (unless there is nothing to judge)."""
    async with loaded_run(target, log, accept_new_host_key, rules, accelerators=True,
                          pool=pool, head=head) as session:
        if not unreadable(session.model):
            session.judge()
            if await session.read_stuck_processes():  # a stuck run's processes say what it does
                session.judge()
        return session


def unreadable(model: RunModel, quiet: bool = False) -> bool:
    """Nothing verl-like in the log at all: say so (unless ``quiet``: said already) instead
    of reporting emptiness. A scheduler's job is never that: its state is the news (a
    queued job has printed nothing yet); nor is a log that holds only a run's end (a
    window of it) or only its start (a run hung before its first step)."""
    reason = not_a_training_log(model)
    if reason is not None and not quiet:
        print(f"rlwatch: {reason}", file=sys.stderr)
    return reason is not None


def not_a_training_log(model: RunModel) -> str | None:
    """Why ``model``'s log is taken for no training log (one line), or None: see
    ``unreadable``. ``status`` and the fleet say the same, and exit the same."""
    if model.has_training_output() or model.start_seen:
        return None
    return f"{safe_text(model.log)}: no verl step lines, progress bars or errors found (not a training log?)"


def report(target: str, model: RunModel, findings: list[Finding],
           accelerators: list[dict] | None = None) -> dict:
    """The ``check --json`` object (its shape is a contract users script against). A run
    that is not running has no ETA (``eta_s`` null: see tui.rules.eta). ``processes``: the
    run's processes as read since its last step, present only where they were read (a run that
    looks stuck, on a host rlwatch can reach): its presence says they were."""
    state = run_state(model, findings)
    result: dict = {
        "target": target,
        "run": {
            "log": model.log,
            "state": state.value,
            "steps": model.step_count,
            "last_step": model.last_step,
            "total_steps": model.total_steps,
            "sec_per_it": _finite_or_none(model.sec_per_it),
            "eta_s": _finite_or_none(eta_s(model, state, time.time())),
        },
        "latest": {key: format_value(value) for key, value in model.latest().items()},
        "findings": [finding.to_json() for finding in findings],
        "accelerators": accelerators or [],
        "job": _job(model.job),
    }
    processes = run_processes(model)
    if processes:
        result["processes"] = [activity.to_json() for activity in processes]
    return result


def _job(job: JobRecord | None) -> dict | None:
    """The scheduler's word on a Ray or Slurm job (None for a plain log): its own state
    word, the state in the words every scheduler shares, its reason, nodes and time limit."""
    if job is None:
        return None
    return {"scheduler": job.scheduler, "id": job.job_id, "state": job.state,
            "outcome": job.outcome.value, "message": job.message, "nodes": list(job.nodes),
            "time_limit_s": job.time_limit_s, "note": job.note}


def _finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def render_text(result: dict, model: RunModel, findings: list[Finding]) -> str:
    """A short human summary of the same facts."""
    run = result["run"]
    total = f"/{run['total_steps']}" if run["total_steps"] else ""
    over = RunState(run["state"]).over  # "yet" is for a run that may still print a step
    where = (f"step {run['last_step']}{total}, {run['steps']} steps with metrics"
             if run["last_step"] is not None else
             f"no step{'' if over else ' yet'}{f' of {total[1:]}' if total else ''}"
             + (f" (the log shows {model.start_seen})" if model.start_seen else ""))
    lines = [f"{safe_text(run['log'])}: {run['state']}, {where}"]  # a file name may hold a newline
    if run["sec_per_it"] is not None:
        overdue = overdue_words(model.last_step_at, model.sec_per_it, time.time(),
                                phase_allowance(model)) if run["state"] == RunState.STALLED else None
        lines.append(f"  {run['sec_per_it']:.2f} s/it" + (
            f", {overdue}" if overdue else
            f", ETA {word_duration(run['eta_s'])}" if run["eta_s"] is not None else
            f", ETA {NO_ETA}" if run["state"] != RunState.RUNNING or model.eta_s is not None else ""))
    for concept in DASHBOARD_CONCEPTS:
        series, key = model.series_for(concept)
        last = series.last() if series is not None else None
        if last is not None:
            lines.append(f"  {concept.title:<16} {last[1]:.6g}  ({key} @ step {last[0]})")
    if model.job is not None:
        job = model.job
        said = f" ({job.message})" if job.message else ""
        lines.append(f"  {job.scheduler} job {job.job_id}: {job.state}{said}"
                     + (f"; {job.note}" if job.note else ""))
    if not findings:
        lines.append("  no findings: every rule holds")
    for finding in findings:
        steps = "" if finding.first_step is None else (
            f" steps {finding.first_step}–{finding.last_step}" if finding.first_step != finding.last_step
            else f" step {finding.first_step}")
        lines.append(f"  {finding.severity.upper():<8} {finding.rule}{steps} ×{finding.count}: "
                     f"{finding.said()}")
    return "\n".join(lines)


def run_check(target: str, log: str | None, as_json: bool, rules_file: str | None = None,
              accept_new_host_key: bool = False, head: HeadStart | None = None,
              mute: str | None = None) -> int:
    """Entry point for ``rlwatch check``; ``head``: the run's source, already connecting;
    ``mute``: ``--mute RULE[,RULE…]``."""
    try:
        rules = load_rules(*override_paths(rules_file), mute=mute)
        work = judged(target, log, accept_new_host_key, rules, head=head)
        session = head.run(work) if head is not None else asyncio.run(work)
    except (SourceError, RuleFileError) as error:
        print(f"rlwatch: {error}", file=sys.stderr)
        return exit_codes.UNREADABLE
    finally:
        if head is not None:
            head.close()
    if unreadable(session.model, quiet=True):
        return exit_codes.UNREADABLE
    readings = [sample.to_json() for sample in session.accelerators.latest()]
    result = report(target, session.model, session.findings, readings)
    # The log's text (keys, crash lines, its path) is shown, never obeyed: safe_text.
    if as_json:
        print(json.dumps(safe_data(result)))
    else:
        print(safe_text(render_text(result, session.model, session.findings), multiline=True))
    return exit_codes.for_worst(worst_severity(session.findings))
