"""``rlwatch check TARGET``: read the run once, report, exit like a monitoring plugin."""

from __future__ import annotations

import asyncio
import json
import math
import socket
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from tui.cli import exit_codes
from tui.cli.targets import local_run_dir, open_target
from tui.feed import Feed
from tui.logger_feeds import read_logger_files
from tui.sources.run_folder import folder_for
from tui.model.accelerators import AcceleratorHistory
from tui.model.aliases import DASHBOARD_CONCEPTS
from tui.parsers.smi.records import AcceleratorSample
from tui.model.run_model import RunModel
from tui.parsers.text import safe_data, safe_text
from tui.parsers.values import format_value
from tui.rules.engine import RuleEngine
from tui.rules.findings import CRITICAL, WARNING, Finding, worst_severity
from tui.rules.rule_file import RuleFileError, load_rules, override_paths
from tui.rules.run_state import run_state
from tui.sources.base import LogSource, SourceError


@asynccontextmanager
async def loaded_run(target: str, log: str | None, accept_new_host_key: bool = False
                     ) -> AsyncIterator[tuple[RunModel, LogSource]]:
    """Read a target to its current end into a fresh model; the source stays open
    inside the block for range reads (samples, step text)."""
    opened = open_target(target, log, accept_new_host_key)
    model = RunModel(opened.source.label)
    try:
        note = await opened.source.connect() or opened.note
        model.log = opened.source.label
        if note:
            print(f"rlwatch: {note}", file=sys.stderr)
        await Feed(opened.source, model).run(follow=False)
        # The run's file-logger JSONL and TensorBoard events, where the log
        # points at them: their exact values replace the console's text.
        folder = folder_for(opened.source, local_run_dir(target))
        for merged in await read_logger_files(model, folder):
            print(f"rlwatch: {merged}", file=sys.stderr)
        yield model, opened.source
    finally:
        await opened.source.close()


async def load(target: str, log: str | None, accept_new_host_key: bool = False) -> RunModel:
    """Read a target to its current end into a fresh model."""
    async with loaded_run(target, log, accept_new_host_key) as (model, _):
        return model


async def _load_with_accelerators(target: str, log: str | None, accept_new_host_key: bool
                                  ) -> tuple[RunModel, list[dict]]:
    async with loaded_run(target, log, accept_new_host_key) as (model, source):
        return model, await accelerators_of(source)


def _history_of(readings: list[dict]) -> AcceleratorHistory:
    """One reading of each device, as a history the accelerator rules can judge."""
    history = AcceleratorHistory()
    history.add([AcceleratorSample(**reading) for reading in readings], time.time())
    return history


def unreadable(model: RunModel) -> bool:
    """Nothing verl-like in the log at all: say so instead of reporting emptiness."""
    if model.step_count or model.progress is not None or model.incidents:
        return False
    print(f"rlwatch: {model.log}: no verl step lines, progress bars or errors found "
          "(not a training log?)", file=sys.stderr)
    return True


def report(target: str, model: RunModel, findings: list[Finding],
           accelerators: list[dict] | None = None) -> dict:
    """The ``check --json`` object (its shape is a contract users script against)."""
    return {
        "target": target,
        "run": {
            "log": model.log,
            "state": run_state(model, findings).value,
            "steps": model.step_count,
            "last_step": model.last_step,
            "total_steps": model.total_steps,
            "sec_per_it": _finite_or_none(model.sec_per_it),
            "eta_s": _finite_or_none(model.eta_s),
        },
        "latest": {key: format_value(value) for key, value in model.latest().items()},
        "findings": [finding.to_json() for finding in findings],
        "accelerators": accelerators or [],
    }


async def accelerators_of(source: LogSource) -> list[dict]:
    """One reading of the run's own host: NVML/nvidia-smi/npu-smi here, or over the run's SSH
    connection. A host without accelerators (a laptop reading a copied log) is no error."""
    from tui.sources.accelerators.detect import NONE_FOUND
    from tui.sources.accelerators.snapshot import take_snapshot

    connection = getattr(source, "connection", None)
    if connection is not None:
        from tui.sources.ssh.ssh_runner import SshRunner

        snapshot = await take_snapshot(SshRunner(connection), source.target.host)
    else:
        from tui.sources.accelerators.runner import LocalRunner

        snapshot = await take_snapshot(LocalRunner(), socket.gethostname(), local=True)
    if snapshot.problem and snapshot.problem != NONE_FOUND:
        print(f"rlwatch: {snapshot.host}: {snapshot.problem}", file=sys.stderr)
    return [sample.to_json() for sample in snapshot.samples]


def _finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def render_text(result: dict, model: RunModel, findings: list[Finding]) -> str:
    """A short human summary of the same facts."""
    run = result["run"]
    total = f"/{run['total_steps']}" if run["total_steps"] else ""
    lines = [f"{run['log']}: {run['state']}, step {run['last_step']}{total}, "
             f"{run['steps']} steps with metrics"]
    if run["sec_per_it"] is not None:
        lines.append(f"  {run['sec_per_it']:.2f} s/it" + (
            f", ETA {run['eta_s'] / 3600:.1f} h" if run["eta_s"] is not None else ""))
    for concept in DASHBOARD_CONCEPTS:
        series, key = model.series_for(concept)
        last = series.last() if series is not None else None
        if last is not None:
            lines.append(f"  {concept.title:<16} {last[1]:.6g}  ({key} @ step {last[0]})")
    if not findings:
        lines.append("  no findings: every rule holds")
    for finding in findings:
        steps = "" if finding.first_step is None else (
            f" steps {finding.first_step}–{finding.last_step}" if finding.first_step != finding.last_step
            else f" step {finding.first_step}")
        lines.append(f"  {finding.severity.upper():<8} {finding.rule}{steps} ×{finding.count}: "
                     f"{finding.message}")
    return "\n".join(lines)


_EXIT_FOR = {None: exit_codes.OK, WARNING: exit_codes.WARNING, CRITICAL: exit_codes.CRITICAL}


def run_check(target: str, log: str | None, as_json: bool, rules_file: str | None = None,
              accept_new_host_key: bool = False) -> int:
    """Entry point for ``rlwatch check``."""
    try:
        engine = RuleEngine(load_rules(*override_paths(rules_file)))
        model, accelerators = asyncio.run(_load_with_accelerators(target, log, accept_new_host_key))
    except (SourceError, RuleFileError) as error:
        print(f"rlwatch: {error}", file=sys.stderr)
        return exit_codes.UNREADABLE
    if unreadable(model):
        return exit_codes.UNREADABLE
    findings = engine.evaluate(model, time.time(), accelerators=_history_of(accelerators))
    result = report(target, model, findings, accelerators)
    # The log's text (keys, crash lines, its path) is shown, never obeyed: safe_text.
    if as_json:
        print(json.dumps(safe_data(result)))
    else:
        print(safe_text(render_text(result, model, findings), multiline=True))
    return _EXIT_FOR[worst_severity(findings)]
