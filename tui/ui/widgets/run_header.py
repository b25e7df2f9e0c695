"""The header: which run, where it stands, and what the source is doing.

The question a user glancing at tmux asks first is "is it still moving?", so
the time since the last new step ticks every second on its own, with no new
data needed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal
from collections.abc import Callable

from rich.cells import cell_len
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget

from tui.model.aliases import STEP_TIME
from tui.model.run_model import RunModel
from tui.parsers.records import JobOutcome, JobRecord
from tui.parsers.text import safe_text
from tui.rules.eta import NO_ETA, overdue_words
from tui.rules.stall_phase import Allowance, phase_allowance
from tui.rules.findings import Severity
from tui.rules.run_state import RunState
from tui.ui.format import format_duration, format_number
from tui.ui.health import STATE_MARK

StatusKind = Literal["ok", "notice", "error"]
"""ok: a healthy state (connected); notice: something to know (the log was
replaced); error: the source is failing (reconnecting, unreadable)."""

# How each kind of source event is drawn in the status area.
_STATUS_STYLE: dict[StatusKind, tuple[str, str]] = {
    "ok": ("●", "$success"),
    "notice": ("↻", "$warning"),
    "error": ("✗", "$error"),
}


_HEALTH_STYLE = {Severity.CRITICAL: "$error", Severity.WARNING: "$warning", None: "$success"}
# The verdict's share of the progress row at most (a crash's exception line is long).
VERDICT_MAX_CELLS = 72
# A healthy source event ("watching grpo.log") is shown this long, then its row is freed.
OK_STATUS_SECONDS = 15.0


@dataclass(slots=True)
class RunFacts:
    """The numbers the header shows, read from the model when it changes."""

    last_step: int | None = None
    total_steps: int | None = None
    sec_per_it: float | None = None
    eta_s: float | None = None
    elapsed_s: float | None = None
    elapsed_estimated: bool = False
    last_step_at: float | None = None
    finished: bool = False
    # The scheduler's word on the job (its time limit: the ETA is weighed against it).
    job: JobRecord | None = None
    # What the step under way's slow phases (a save, a validation) took at their slowest.
    allowance: Allowance | None = None


def read_facts(model: RunModel) -> RunFacts:
    """The header's numbers, with two fallbacks.

    Elapsed is the sum of step times when no progress bar says it. The last
    step's time is when rlwatch saw it, but never later than the log's last
    write: a log read long after it stopped growing (a stalled or finished
    run) must not claim a step "0s ago".
    """
    facts = RunFacts(model.last_step, model.total_steps, model.sec_per_it, model.eta_s,
                     finished=model.finished)
    facts.last_step_at = model.last_step_at
    facts.job = model.job
    facts.allowance = phase_allowance(model)
    if model.progress is not None and model.progress.elapsed_s is not None:
        facts.elapsed_s = model.progress.elapsed_s
    else:
        series, _ = model.series_for(STEP_TIME)
        if series is not None and len(series):
            facts.elapsed_s = series.finite_sum()  # kept as steps arrive: no rescan per redraw
            facts.elapsed_estimated = True
    return facts


class RunHeader(Widget):
    """The run's label, its progress and timing, and the latest source event when there is one.

    Source events (a log replaced, a reconnect) get a line of their own and
    wrap rather than being cut: they are rare and they are the news.
    """

    DEFAULT_CSS = """
    RunHeader {
        height: auto;
        padding: 0 1;
        background: $panel;
        color: $text;
    }
    """

    def __init__(self, label: str, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.label = safe_text(label)  # a (remote) file name: shown, never obeyed
        self.clock = clock
        self.facts = RunFacts()
        self.status: tuple[str, StatusKind] | None = None
        self.health: tuple[Severity | None, str] | None = None
        self.over = False
        # The run's state word (None until the rules have judged it): only a running run
        # has an ETA (tui.rules.eta).
        self.state: RunState | None = None
        self._status_timer: Timer | None = None
        self._clock_timer: Timer | None = None
        self._clear_when_mounted = False

    class VerdictClicked(Message):
        """The header was clicked: show what its verdict names (the screen decides how)."""

    def on_mount(self) -> None:
        self._clock_timer = self.set_interval(1.0, self._tick)
        if self._clear_when_mounted:
            self._status_timer = self.set_timer(OK_STATUS_SECONDS, self._clear_ok_status)

    def _tick(self) -> None:
        """Redraw the time since the last step while the dashboard is the screen on top:
        Textual repaints the screen above wherever the one beneath it changes, so ticking
        under the steps, the detail or a chart repainted them whole every second."""
        if self.app.screen is self.screen:
            self.refresh()

    def restart_clock(self) -> None:
        """The dashboard came back on top and is drawn whole, the time since the last step
        with it: the next tick is a second from now. Left on its old beat, the tick
        redrew the header anywhere up to a second later, often a few milliseconds after
        the screen, a second frame for the ``esc`` that brought it back."""
        if self._clock_timer is not None:
            # A new timer: Timer.reset() keeps the old beat until its current wait ends.
            self._clock_timer.stop()
            self._clock_timer = self.set_interval(1.0, self._tick)

    def on_click(self) -> None:
        self.post_message(self.VerdictClicked())

    def show(self, model: RunModel) -> None:
        """Take the model's latest numbers."""
        self.facts = read_facts(model)
        self.refresh()

    def show_health(self, severity: Severity | None, text: str, over: bool = False,
                    state: RunState | None = None) -> None:
        """The rules' verdict on the whole run (worst severity and a few words); ``over``: it
        crashed or finished (a run with no step then waits for none); ``state``: its word."""
        health = (severity, safe_text(text))
        if health != self.health or over != self.over or state != self.state:
            self.health, self.over, self.state = health, over, state
            self.refresh()

    def show_status(self, text: str, kind: StatusKind = "ok") -> None:
        """Show a source event (a reset, a reconnect) until the next one replaces it; a
        healthy one ("watching grpo.log", "connected") goes after OK_STATUS_SECONDS, so
        it does not hold a row of a 24-row screen for the whole session."""
        self.status = (safe_text(text), kind)  # may quote an SSH server, a hook, the log
        self.refresh(layout=True)  # the status line may add or remove header rows
        if self._status_timer is not None:
            self._status_timer.stop()
            self._status_timer = None
        if kind == "ok" and self.is_attached:
            self._status_timer = self.set_timer(OK_STATUS_SECONDS, self._clear_ok_status)
        elif kind == "ok":
            self._clear_when_mounted = True

    def _clear_ok_status(self) -> None:
        self._status_timer = None
        if self.status is not None and self.status[1] == "ok":
            self.status = None
            self.refresh(layout=True)

    def render(self) -> Content:
        lines = [self._title_line(), self._progress_line()]
        if self.status is not None:
            text, kind = self.status
            mark, style = _STATUS_STYLE[kind]
            # One row, cut at the width: a long note (which log was chosen, a reconnect's
            # error) must not push the panels down for the whole session.
            line = Content.assemble((f"{mark} ", style), (text, style))
            lines.append(line.truncate(max(1, self.size.width - 2), ellipsis=True))
        return Content("\n").join(lines)

    def _title_line(self) -> Content:
        prefix = Content.assemble(("rlwatch", "bold $primary"), "  ")
        label = _keep_end(self.label, max(8, self.size.width - prefix.cell_length))
        return Content.assemble(prefix, (label, "$text"))

    def _progress_line(self) -> Content:
        """One row whatever the width: the fields that do not fit are dropped, least
        telling first (elapsed, s/it, ETA, the time since the last step, the step), and
        the verdict, which is never dropped, is cut at the end as a last resort."""
        facts = self.facts
        parts: list[tuple[int, Content]] = []  # (keep priority: higher is dropped later, field)
        job = facts.job
        if facts.last_step is None and job is not None and job.outcome == JobOutcome.PENDING:
            queued = f"queued: {job.scheduler} {job.state}" + (f" ({job.message})" if job.message else "")
            parts.append((5, Content.styled(safe_text(queued), "$text-muted")))
        elif facts.last_step is None:
            # A run that crashed or finished will print no step: "waiting" would promise one.
            parts.append((5, Content.styled("no step" if self.over else "waiting for the first step…",
                                            "$text-muted")))
        else:
            total = f"/{facts.total_steps}" if facts.total_steps else ""
            parts.append((5, _field("step", f"{facts.last_step}{total}")))
        if facts.sec_per_it is not None:
            parts.append((2, _field("s/it", format_number(facts.sec_per_it), after=True)))
        overdue = overdue_words(facts.last_step_at, facts.sec_per_it, self.clock(), facts.allowance)
        if facts.finished:
            parts.append((3, Content.styled("finished", "bold $success")))
        elif self.state == RunState.STALLED or (overdue and self.state in (None, RunState.RUNNING)):
            # How long since the last step against a step's time says more than a frozen ETA.
            if overdue:
                parts.append((3, Content.styled(overdue, "$warning")))
        elif self.state not in (None, RunState.RUNNING):
            parts.append((3, _field("ETA", NO_ETA)))
        elif facts.eta_s is not None:
            parts.append((3, _field("ETA", format_duration(facts.eta_s))))
        if (left := facts.job.time_left_s(self.clock()) if facts.job is not None else None) is not None:
            parts.append((3, _time_limit(left, facts.eta_s)))
        if facts.elapsed_s is not None:
            prefix = "≈" if facts.elapsed_estimated else ""
            parts.append((1, _field("elapsed", prefix + format_duration(facts.elapsed_s))))
        if facts.last_step_at is not None:
            ago = max(0.0, self.clock() - facts.last_step_at)
            parts.append((4, _field("last step", format_duration(ago) + " ago")))
        if self.health is not None:
            severity, text = self.health
            style = _HEALTH_STYLE[severity]
            # A crash's exception line can run to hundreds of characters: the header holds
            # its start, the findings and ``w`` the whole of it, and the other fields stay.
            verdict = Content.assemble((STATE_MARK[severity], f"bold {style}"), " ", (text, style))
            parts.append((9, verdict.truncate(VERDICT_MAX_CELLS, ellipsis=True)))
        width = max(1, self.size.width - 2) if self.size.width else 10_000
        while len(parts) > 1 and sum(part.cell_length + 2 for _, part in parts) - 2 > width:
            lowest = min(range(len(parts) - 1), key=lambda at: parts[at][0])
            if parts[lowest][0] >= 5 and parts[-1][0] == 9:
                break  # the step stays beside the verdict; the verdict is cut instead
            del parts[lowest]
        line = Content("  ").join(part for _, part in parts)
        return line.truncate(width, ellipsis=True)


def _keep_end(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells from the left: a path's end says the most."""
    if cell_len(text) <= width:
        return text
    kept: list[str] = []
    used = 1  # the ellipsis
    for char in reversed(text):
        used += cell_len(char)
        if used > width:
            break
        kept.append(char)
    return "…" + "".join(reversed(kept))


def _time_limit(left_s: float, eta_s: float | None) -> Content:
    """``limit in 1h02m`` (the scheduler ends the job then), in the warning colour with
    ``< ETA`` when the run will not finish in time."""
    value = format_duration(max(0.0, left_s))
    if eta_s is None or eta_s <= left_s:
        return _field("limit in", value)
    return Content.assemble(("limit in", "$text-muted"), " ", (value, "bold $warning"), " ",
                            ("< ETA", "$warning"))


def _field(name: str, value: str, after: bool = False) -> Content:
    """``name value`` (or ``value name`` for units) with the name dimmed."""
    if after:
        return Content.assemble((value, "bold"), " ", (name, "$text-muted"))
    return Content.assemble((name, "$text-muted"), " ", (value, "bold"))
