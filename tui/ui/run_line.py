"""A run in one short line: the terminal title and ``rlwatch status`` say the same thing.

``cola/train 120/200 reward 0.734 ✖ CRIT loss-nan`` — which run, where it
stands, the reward, and its worst state with the rule behind it. Short enough
for a tmux window list or ``status-right``; pure, so ``rlwatch status``
formats it without loading Textual.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from tui.model.aliases import TRAIN_REWARD
from tui.model.run_model import RunModel
from tui.rules.findings import Finding, worst_severity
from tui.rules.process_activity import process_brief, run_processes
from tui.rules.run_state import run_state
from tui.sources.discovery import LOG_SUFFIXES
from tui.ui.format import format_number
from tui.ui.health import STATE_MARK, crash_of


def run_name(label: str) -> str:
    """A log's short name: its directory and file stem (``/runs/cola/train.log`` → ``cola/train``).

    The directory is usually what names a run; the stem tells two logs of one
    run apart. Only a log's own suffix is dropped: a sweep's directories hold dots
    (``…_kl0.001``, ``…_kl0.01``) that tell its runs apart. A remote ``host:`` prefix is dropped: a window list has no room. A job on a
    cluster's dashboard (a Ray job: ``JOB on http://head:8265``) is its job id.
    """
    job, on, where = label.partition(" on ")
    if on and "://" in where:
        return job
    path = PurePosixPath(label.replace("\\", "/").split(":", 1)[-1] if ":/" in label else label)
    parts = [part for part in path.parts if part != "/"]
    if not parts:
        return label
    last = PurePosixPath(parts[-1])
    # A log's suffix goes; a run directory's dots are its name (``lr1e-6_kl0.001``, not ``kl0``).
    stem = last.stem if last.suffix in (*LOG_SUFFIXES, ".jsonl") else last.name
    return "/".join([*parts[-2:-1], stem or parts[-1]])


# How much of a crash's exception line a one-line status has room for.
CRASH_TEXT = 48


def state_words(findings: list[Finding]) -> str:
    """``✓ ok``, or the worst state's mark and its first rule, ``+N`` for the other rules.

    A crash always comes first and says what failed (``✖ CRIT crash: torch.OutOfMemoryError:
    CUDA out of…``): it is the one state that must never hide behind ``+1``.
    """
    worst = worst_severity(findings)
    if worst is None:
        return STATE_MARK[None]
    counted = [f for f in findings if f.counts]
    rules = list(dict.fromkeys(f.rule for f in counted if f.severity == worst))
    crash = crash_of(counted)
    first = rules[0]
    if crash is not None:
        rules.remove(crash.rule)
        rules.insert(0, crash.rule)
        text = crash.exception or ""
        first = f"{crash.rule}: {text[:CRASH_TEXT - 1] + '…' if len(text) > CRASH_TEXT else text}"
    more = f" +{len(rules) - 1}" if len(rules) > 1 else ""
    return f"{STATE_MARK[worst]} {first}{more}"


def run_line(name: str, model: RunModel, findings: list[Finding]) -> str:
    """``name step[/total] reward R state`` (no step yet: ``name waiting for a step``; none
    ever, the run being over: ``name no step``); a stalled run whose processes were read says
    what its trainer does (``… ✖ CRIT stalled · pid 5642 stopped``)."""
    if model.last_step is None:
        waits = "no step" if run_state(model, findings).over else "waiting for a step"
        return f"{name} {waits} {state_words(findings)}{_trainer(model, findings)}"
    total = f"/{model.total_steps}" if model.total_steps else ""
    parts = [name, f"{model.last_step}{total}"]
    series, _ = model.series_for(TRAIN_REWARD)
    last = series.last() if series is not None else None
    if last is not None:
        parts.append(f"reward {format_number(last[1])}")
    parts.append(state_words(findings))
    return " ".join(parts) + _trainer(model, findings)


def _trainer(model: RunModel, findings: list[Finding]) -> str:
    """`` · pid 5642 stopped`` for a stalled run whose processes were read since its last step."""
    if not any(finding.rule == "stalled" and finding.counts for finding in findings):
        return ""
    brief = process_brief(run_processes(model))
    return f" · {brief}" if brief is not None else ""
