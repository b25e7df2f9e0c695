"""A fleet's runs as rows: what each row says, and which runs come first.

Pure (no Textual), so ``rlwatch status`` on several runs says what the fleet
screen says. A row's state is one word, and the rows sort by it, worst
first: a crash, then a run that cannot be read (its host is down, its path is
not there), a stall, a critical finding, a warning; then the runs that are
fine, the ones still opening or not started, and last the ones that are done.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from tui.model.accelerators import AcceleratorHistory
from tui.model.aliases import TRAIN_REWARD, VALIDATION, Concept
from tui.model.run_model import RunModel
from tui.rules.eta import NO_ETA, eta_s
from tui.rules.findings import Finding, Severity, worst_severity
from tui.rules.run_state import RunState, run_state
from tui.ui.format import format_duration, format_number
from tui.ui.health import STATE_MARK, failure_words, worst_finding
from tui.ui.telling_names import telling_names


# The widths of the number cells (the fleet screen's columns): a value is cut to fewer digits
# to fit rather than ellipsised (``-0.0183``, not ``-0.018…``).
VALUE_WIDTH = 7  # train reward, validation
RATE_WIDTH = 6  # seconds per step


class RowState(str, Enum):
    """A row's state, worst first: the order the fleet sorts by."""

    CRASHED = "crashed"
    UNREACHABLE = "unreachable"
    STALLED = "stalled"
    CRITICAL = "critical"
    WARNING = "warning"
    RUNNING = "running"
    OPENING = "opening"
    PENDING = "pending"
    FINISHED = "finished"

    @property
    def rank(self) -> int:
        """0 for the worst state; rows sort by it."""
        return list(RowState).index(self)


@dataclass(frozen=True, slots=True)
class FleetRow:
    """What one row shows, each cell already text (``-``: not known yet)."""

    name: str
    host: str
    state: RowState
    step: str
    sec_per_it: str
    eta: str
    since: str
    reward: str
    val: str
    worst: str
    accelerators: str


def row_state(model: RunModel | None, findings: list[Finding], problem: str | None,
              opened: bool) -> RowState:
    """The row's state: the run's own (crashed, stalled, finished…), worsened by a host that
    is down and by the worst finding."""
    if problem is not None:
        # A run that crashed stays crashed while its host is away; anything else is unknown.
        if model is not None and run_state(model, findings) == RunState.CRASHED:
            return RowState.CRASHED
        return RowState.UNREACHABLE
    if model is None or not opened:
        return RowState.OPENING
    state = run_state(model, findings)
    if state in (RunState.CRASHED, RunState.STALLED, RunState.FINISHED, RunState.PENDING):
        return RowState(state.value)
    worst = worst_severity(findings)
    if worst is Severity.CRITICAL:
        return RowState.CRITICAL
    if worst is Severity.WARNING:
        return RowState.WARNING
    return RowState.RUNNING


def fleet_row(name: str, host: str, model: RunModel | None, findings: list[Finding],
              accelerators: AcceleratorHistory | None, problem: str | None, opened: bool,
              now: float) -> FleetRow:
    """The row of one run (``model`` None: its session is not made yet)."""
    state = row_state(model, findings, problem, opened)
    if model is None:
        return FleetRow(name, host, state, "-", "-", "-", "-", "-", "-", problem or "", "-")
    total = f"/{model.total_steps}" if model.total_steps else ""
    step = "-" if model.last_step is None else f"{model.last_step}{total}"
    last_at = model.last_step_at
    worst = worst_finding(findings)
    run = run_state(model, findings)
    left = eta_s(model, run, now)  # none for a run that is not running (tui.rules.eta)
    eta = NO_ETA if run != RunState.RUNNING or (left is None and model.eta_s is not None) else _duration(left)
    return FleetRow(
        name, host, state, step,
        _number(model.sec_per_it, RATE_WIDTH), eta,
        "-" if last_at is None else age(now - last_at),
        _last(model, TRAIN_REWARD), _last(model, VALIDATION),
        problem or ("" if worst is None else _finding_words(worst)),
        _use(accelerators))


def age(seconds: float) -> str:
    """How long ago, to the minute past the first (``42s``, ``7m``, ``3h12m``, ``2d04h``): a
    row that changes every second would redraw an idle fleet every second."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{int(seconds)}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    return format_duration(seconds)


# An exception's class named with its module (``torch.OutOfMemoryError``): the row keeps the
# class alone, the module taking room a narrow screen needs for what failed.
QUALIFIED_CLASS = re.compile(r"^(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_]\w*(?:[:(]|$))")


def _finding_words(finding: Finding) -> str:
    if finding.exception:
        exception = finding.exception
        return f"{finding.rule}: " + failure_words(finding).replace(
            exception, QUALIFIED_CLASS.sub("", exception), 1)
    return f"{finding.rule}: {finding.message}" if finding.message else finding.rule


def _number(value: float | None, width: int) -> str:
    return "-" if value is None or not math.isfinite(value) else format_number(value, width)


def _duration(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else format_duration(value)


def _last(model: RunModel, concept: Concept) -> str:
    series, _ = model.series_for(concept)
    last = series.last() if series is not None else None
    return "-" if last is None else format_number(last[1], VALUE_WIDTH)


def _use(accelerators: AcceleratorHistory | None) -> str:
    """The mean use of the host's devices now, and how many: ``87% ×8``."""
    if accelerators is None:
        return "-"
    readings = [sample.util_pct for sample in accelerators.latest() if sample.util_pct is not None]
    if not readings:
        return "-"
    return f"{sum(readings) / len(readings):.0f}% ×{len(readings)}"


def row_order(row: FleetRow) -> tuple[int, str, str]:
    """Where a row sorts: worst state first; within a state by name, then host (so rows
    stay put while their runs go on)."""
    return row.state.rank, row.name, row.host


def worst_first(rows: Sequence[FleetRow]) -> list[FleetRow]:
    """The rows, worst state first."""
    return sorted(rows, key=row_order)


def fleet_line(rows: Sequence[FleetRow]) -> str:
    """The fleet in one line for tmux's status bar: the counts by state, worst first, and the
    worst run's name where one is not fine: ``20 runs: 1 crashed 2 warning 17 running ✖ cola``
    (of a sweep, the part of its name that tells it from the others: ``✖ …lr3e-6_kl0.001``)."""
    if not rows:
        return "no runs"
    counts = Counter(row.state for row in rows)
    words = " ".join(f"{counts[state]} {state.value}" for state in RowState if counts[state])
    head = f"{len(rows)} run{'s' if len(rows) != 1 else ''}: {words}"
    worst = worst_first(rows)[0]
    if worst.state.rank > RowState.WARNING.rank:
        return head
    mark = STATE_MARK[Severity.WARNING if worst.state == RowState.WARNING else Severity.CRITICAL]
    names = [row.name for row in rows]
    return f"{head} {mark.split()[0]} {telling_names(names)[names.index(worst.name)]}"
