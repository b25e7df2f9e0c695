"""``rlwatch report TARGET``: the end-of-run verdict, in the terminal or as a file."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tui.cli import exit_codes
from tui.cli.check import loaded_run, unreadable
from tui.parsers.records import Sample
from tui.parsers.rollout_dumps import parse_dump
from tui.report.render import to_html, to_json, to_markdown, to_text
from tui.report.verdict import Report, build_report
from tui.rules.rule_file import RuleFileError, RuleSpec, load_rules, override_paths
from tui.sources.base import SourceError
from tui.sources.run_folder import RunFolder


async def dumped_samples(folder: RunFolder | None) -> tuple[list[Sample], list[float] | None]:
    """Samples of the last validation dump and scores of the last rollout dump, if the run
    wrote dumps (``trainer.validation_data_dir`` / ``rollout_data_dir``), here or on the box."""
    samples: list[Sample] = []
    rollout: list[float] | None = None
    if folder is None:
        return samples, rollout
    for dump in await folder.dump_dirs():
        try:
            rows = parse_dump(await folder.read(dump.file_for(dump.steps[-1])))
        except (OSError, SourceError):
            continue
        if dump.validation and not samples:
            samples = rows
        elif not dump.validation and rollout is None:
            rollout = [s.score for s in rows if s.score is not None]
    return samples, rollout


async def _build(target: str, log: str | None, rules: list[RuleSpec], goal: float | None,
                 accept_new_host_key: bool = False) -> Report | None:
    async with loaded_run(target, log, accept_new_host_key, rules) as session:
        if unreadable(session.model):
            return None
        samples = await session.printed_samples()
        dumped, rollout = await dumped_samples(session.folder)
    return build_report(session.model, session.judge(), dumped or samples, goal, rollout)


def run_report(target: str, log: str | None, goal: float | None, output: str | None,
               as_json: bool, rules_file: str | None, accept_new_host_key: bool = False,
               mute: str | None = None) -> int:
    """Entry point for ``rlwatch report``."""
    try:
        rules = load_rules(*override_paths(rules_file), mute=mute)
        report = asyncio.run(_build(target, log, rules, goal, accept_new_host_key))
    except (SourceError, RuleFileError) as error:
        print(f"rlwatch: {error}", file=sys.stderr)
        return exit_codes.UNREADABLE
    if report is None:
        return exit_codes.UNREADABLE
    if as_json:
        print(json.dumps(to_json(report)))
    elif output is None:
        print(to_text(report))
    else:
        path = Path(output)
        render = to_html if path.suffix.lower() in (".html", ".htm") else to_markdown
        try:
            path.write_text(render(report), encoding="utf-8")
        except OSError as error:
            print(f"rlwatch: {output}: cannot write ({error.strerror or error})", file=sys.stderr)
            return exit_codes.CANNOT_WRITE
        print(f"rlwatch: wrote {output}", file=sys.stderr)
    return exit_codes.OK
