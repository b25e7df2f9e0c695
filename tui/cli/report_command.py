"""``rlwatch report TARGET``: the end-of-run verdict, in the terminal or as a file."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from tui.cli import exit_codes
from tui.cli.check import loaded_run, unreadable
from tui.model.run_model import RunModel
from tui.parsers.records import Sample
from tui.parsers.samples import parse_samples
from tui.parsers.text import decode
from tui.report.render import to_html, to_json, to_markdown, to_text
from tui.report.verdict import SHOWN_SAMPLES, build_report
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import RuleFileError, load_rules, override_paths
from tui.sources.base import LogSource, SourceError

# A printed sample block is a prompt and a response: this much text holds one.
_SAMPLE_BYTES = 256 * 1024


async def printed_samples(model: RunModel, source: LogSource) -> list[Sample]:
    """The newest printed validation samples, read by byte range from the log."""
    samples = []
    for offset in model.sample_offsets[-SHOWN_SAMPLES:]:
        text = decode(await source.read_range(offset, offset + _SAMPLE_BYTES))
        found = parse_samples(text, offset)
        if found:
            samples.append(found[0])
    return samples


async def _build(target: str, log: str | None, engine: RuleEngine, goal: float | None):
    async with loaded_run(target, log) as (model, source):
        if unreadable(model):
            return None
        samples = await printed_samples(model, source)
    return build_report(model, engine.evaluate(model, time.time()), samples, goal)


def run_report(target: str, log: str | None, goal: float | None, output: str | None,
               as_json: bool, rules_file: str | None) -> int:
    """Entry point for ``rlwatch report``."""
    try:
        engine = RuleEngine(load_rules(*override_paths(rules_file)))
        report = asyncio.run(_build(target, log, engine, goal))
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
            print(f"rlwatch: {output}: {error.strerror or error}", file=sys.stderr)
            return exit_codes.UNREADABLE
        print(f"rlwatch: wrote {output}", file=sys.stderr)
    return exit_codes.OK
