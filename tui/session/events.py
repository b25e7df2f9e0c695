"""What a watcher with no screen tells people: a run's findings and state, turned into events.

The dashboard shows everything all the time; someone asleep must be told only
what changed, once: a new critical finding (a crash with its exception line
and failing rank, a stall with how long and after which step, a nan, a
collapse), a stalled run that moves again, a run that finishes (with the
report's verdict line), new warnings if asked, and a reminder now and then
while a run stays critical.

Pure: ``run_events`` reads a judged run and an ``Announced`` record (what was
told before, kept per run by the caller between restarts) and returns the
events, updating the record. Every text from the log is in its neutralised
form (``safe_text``): the events go to terminals, chat channels and mail.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Literal

from tui.durations import word_duration
from tui.model.run_model import RunModel
from tui.parsers.text import safe_text
from tui.report.verdict import build_report, verdict_line
from tui.rules.findings import Finding, Severity
from tui.rules.run_state import RunState, run_state
from tui.session.alerts import identity

EventKind = Literal["critical", "explained", "warning", "moving", "finished", "reminder"]

# A crash is known by its first line before its block is read (over SSH, the block is fetched
# by range once the log has been quiet for a moment): it is told as soon as its exception line
# is read, or after this long in any case (a block cut short, its process killed mid-print, is
# never finished). Part of the 5 s a crash may take to be told: the watcher judges a waiting run
# again at this deadline (``Announced.told_by``), and the notifier gathers for BURST_S after.
# A block whose exception line comes later still (a log that arrives in pieces seconds apart:
# Ray's log stream on a loaded head, a slow NFS) is told again then, as ``explained``.
BLOCK_WAIT_S = 2.0


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One thing to tell: which run, where it stands, and what happened (one plain line)."""

    kind: EventKind
    run: str
    host: str
    step: int | None
    total: int | None
    what: str
    at: float
    rule: str | None = None
    exception: str | None = None
    rank: int | None = None

    def line(self) -> str:
        """``cola on gpu-1, step 4/12: crashed: RuntimeError: … (rank 1 on node07)``."""
        step = "no step yet" if self.step is None else \
            f"step {self.step}" + (f"/{self.total}" if self.total else "")
        return f"{self.run} on {self.host}, {step}: {self.what}"

    def to_json(self) -> dict[str, object]:
        """The ``watch --json`` form of the event (a contract)."""
        out = {name: value for name, value in asdict(self).items() if value is not None}
        out["time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.at))
        return out


@dataclass
class Announced:
    """What was told about one run: kept between restarts so nothing is told twice."""

    # The identities (tui.session.alerts.identity, as JSON) of the findings told.
    findings: list[str] = field(default_factory=list)
    # The stall told and not yet over, and since when it was told.
    stall: str | None = None
    stall_told_at: float | None = None
    finished: bool = False
    # When the run was last said to be critical (for ``--remind``); None while it is not.
    critical_told_at: float | None = None
    # Crashes seen whose block is not read yet, and since when (see BLOCK_WAIT_S).
    waiting: dict[str, float] = field(default_factory=dict)
    # Crashes told before their exception line was read: told again once it is.
    unexplained: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def told_by(self) -> float | None:
        """When the crash waiting longest for its exception line is told without it (None: none
        waits): a watcher judges the run again then, not at its next round."""
        return min(self.waiting.values()) + BLOCK_WAIT_S if self.waiting else None

    @classmethod
    def from_json(cls, data: object) -> Announced:
        """The record read back; anything unexpected (an older or damaged file) is forgotten."""
        if not isinstance(data, dict):
            return cls()
        try:
            announced = cls(**data)
        except TypeError:
            return cls()
        if not isinstance(announced.findings, list) or not all(isinstance(key, str) for key in announced.findings) \
                or not isinstance(announced.waiting, dict) or not isinstance(announced.unexplained, list):
            return cls()
        return announced


def finding_key(finding: Finding) -> str:
    """A finding's identity as a string that survives a restart (JSON)."""
    return json.dumps(identity(finding), default=str)


def run_events(run: str, host: str, model: RunModel, findings: list[Finding], announced: Announced,
               now: float, *, warnings: bool = False, remind_s: float | None = None) -> list[RunEvent]:
    """The events of a judged run since ``announced`` (which is updated): ``findings`` are the
    rules' on ``model`` now; ``warnings``: tell new warnings too; ``remind_s``: remind this
    often while the run stays critical."""
    state = run_state(model, findings)

    def event(kind: EventKind, what: str, finding: Finding | None = None) -> RunEvent:
        return _event(kind, run, host, model, what, now, finding)

    told = set(announced.findings)
    unread = {failure.offset for failure in model.unread_failures()}
    events = []
    keys = [finding_key(finding) for finding in findings]
    # A block read as harmless (``Exception ignored in``) leaves no crash: nothing waits for it.
    announced.waiting = {key: since for key, since in announced.waiting.items() if key in keys}
    announced.unexplained = [key for key in announced.unexplained if key in keys]
    for finding, key in zip(findings, keys):
        if key in announced.unexplained and finding.offset not in unread:
            announced.unexplained.remove(key)  # its exception line, read after it was told
            events.append(event("explained", describe(finding), finding))
        wanted = finding.severity == Severity.CRITICAL or warnings
        if key in told or not wanted:
            continue
        if finding.offset in unread:
            if now - announced.waiting.setdefault(key, now) < BLOCK_WAIT_S:
                continue  # its exception line is on its way
            announced.unexplained.append(key)
        announced.waiting.pop(key, None)
        told.add(key)
        announced.findings.append(key)
        kind: EventKind = "critical" if finding.severity == Severity.CRITICAL else "warning"
        events.append(event(kind, describe(finding), finding))
        if finding.rule == "stalled":
            announced.stall, announced.stall_told_at = key, now
    stalled = any(finding.rule == "stalled" for finding in findings)
    if announced.stall is not None and not stalled:
        if state in (RunState.RUNNING, RunState.FINISHED):
            since = announced.stall_told_at
            how_long = f" ({word_duration(now - since)} after it was said to be stalled)" if since else ""
            events.append(event("moving", f"moving again{how_long}"))
        announced.stall, announced.stall_told_at = None, None
    if state == RunState.FINISHED and not announced.finished:
        announced.finished = True
        events.append(event("finished", verdict_line(build_report(model, findings, [], None))))
    critical = [finding for finding in findings if finding.severity == Severity.CRITICAL]
    if not critical:
        announced.critical_told_at = None
    elif any(e.kind == "critical" for e in events):
        announced.critical_told_at = now
    elif announced.critical_told_at is None:
        announced.critical_told_at = now  # told before this record kept the time
    elif remind_s is not None and now - announced.critical_told_at >= remind_s:
        announced.critical_told_at = now
        events.append(event("reminder", f"still {state.value}: {describe(critical[0])}", critical[0]))
    return events


def critical_events(run: str, host: str, model: RunModel, fresh: list[Finding], now: float) -> list[RunEvent]:
    """The events of critical findings a screen has just announced (``RunSession.new_criticals``:
    told once while the screen is open, with nothing kept between runs of it)."""
    return [_event("critical", run, host, model, describe(finding), now, finding) for finding in fresh]


def _event(kind: EventKind, run: str, host: str, model: RunModel, what: str, now: float,
           finding: Finding | None) -> RunEvent:
    exception = finding.exception if finding is not None else None
    rank = finding.where.rank if finding is not None and finding.where is not None else None
    return RunEvent(kind, safe_text(run), safe_text(host), model.last_step, model.total_steps,
                    safe_text(what), now, finding.rule if finding is not None else None,
                    safe_text(exception) if exception is not None else None, rank)


def describe(finding: Finding) -> str:
    """A finding in a few words: a crash by its exception line and where it happened, a
    stall by its own message (how long, after which step), any other by rule and message."""
    where = finding.where.words() if finding.where is not None else ""
    if finding.rule == "crash" and finding.exception:
        return f"crashed: {finding.exception}" + (f" ({where})" if where else "")
    if finding.rule == "stalled":
        return f"stalled: {finding.message}"
    return f"{finding.rule}: {finding.message}"
