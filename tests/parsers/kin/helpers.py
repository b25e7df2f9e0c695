"""Reading a few lines of text through the real scanner, for the kin grammar tests."""

from __future__ import annotations

from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import ProgressRecord, Record, RunEndRecord, StepRecord, TotalStepsRecord


def scan(text: str | bytes) -> list[Record]:
    data = text.encode() if isinstance(text, str) else text
    scanner = LogScanner()
    return scanner.feed(data) + scanner.finish()


def steps(text: str | bytes) -> dict[int, dict[str, float]]:
    """Step -> metrics, later records winning, as the model folds them."""
    out: dict[int, dict[str, float]] = {}
    for record in scan(text):
        if isinstance(record, StepRecord):
            out.setdefault(record.step, {}).update(record.metrics)
    return out


def totals(text: str) -> list[int]:
    return [r.total for r in scan(text) if isinstance(r, TotalStepsRecord)]


def ends(text: str) -> int:
    return sum(isinstance(r, RunEndRecord) for r in scan(text))


def bars(text: str) -> list[ProgressRecord]:
    return [r for r in scan(text) if isinstance(r, ProgressRecord)]


def model(text: str) -> RunModel:
    run = RunModel()
    run.apply(scan(text), now=0.0)
    return run
