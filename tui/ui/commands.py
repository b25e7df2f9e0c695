"""The command palette (ctrl+p): any screen, the crash, any finding, any metric's chart,
any step, by name.

Metric keys and exception lines come from the log, so they are shown as
literal Content (through ``safe_text``): the palette's own highlighter would
read ``[bold]`` in a key as markup.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from tui.parsers.text import safe_text
from tui.rules.findings import Finding
from tui.ui.health import STATE_MARK, worst_finding
from tui.ui.screens.goto_step import landing_step

if TYPE_CHECKING:
    from tui.ui.app import RlwatchApp

Command = tuple[str, Callable[[], object], str]


# A palette entry's help is one line: an exception line of 300 characters wrapped to five.
HELP_CHARS = 72


def one_line(text: str) -> str:
    """``text`` cut to ``HELP_CHARS`` with an ellipsis, log text made safe."""
    text = safe_text(text)
    return text if len(text) <= HELP_CHARS else text[:HELP_CHARS - 1] + "…"


def finding_name(finding: Finding) -> str:
    """``finding kl-high actor/kl_loss`` (the rule, and the metric it judged, if any)."""
    return safe_text(" ".join(filter(None, ("finding", finding.rule, finding.metric))))


def finding_help(finding: Finding) -> str:
    """Where the finding was last seen and what it says (``▲ WARN step 12: above 0.03``)."""
    what = finding.exception or finding.reason or finding.message
    where = f"step {finding.last_step}" if finding.last_step is not None else "before the first step"
    return one_line(f"{STATE_MARK[finding.severity]} {where}: {what}" if what
                    else f"{STATE_MARK[finding.severity]} {where}")


class RunCommands(Provider):
    """Screens first, then the crash, each finding and a chart per metric key; a number
    opens that step."""

    @property
    def _app(self) -> RlwatchApp:
        return cast("RlwatchApp", self.app)

    def _screens(self) -> list[Command]:
        app = self._app
        return [
            ("Dashboard", app.action_dashboard, "the panels of the run"),
            ("Steps", app.action_steps, "one row per step, newest first"),
            ("Findings", app.action_findings, "every finding of the health rules"),
            ("Report", app.action_report, "the end-of-run report"),
            ("Processes", app.action_processes, "which processes hold each GPU/NPU"),
            ("Why is it stuck", app.open_why_stuck, "why the run prints no new step, each piece of "
                                                    "evidence with where it was read"),
            ("Keys", app.action_help, "the keys of the current screen"),
        ]

    def _findings(self) -> list[Command]:
        """``Crash`` (what ``w`` opens on a crashed run: its traceback), then one entry per
        finding, opening where it happened as ``enter`` on the findings screen does."""
        app = self._app
        commands: list[Command] = []
        crash = worst_finding([f for f in app.findings if f.rule == "crash" and f.offset is not None])
        if crash is not None:
            commands.append(("Crash", partial(app.open_finding, crash),
                             one_line(f"the traceback: {crash.exception or crash.message}")))
        return commands + [(finding_name(f), partial(app.open_finding, f), finding_help(f))
                           for f in app.findings]

    def _charts(self) -> list[Command]:
        app = self._app
        # A key is log text: its name is shown through safe_text, the key itself is opened.
        return [(safe_text(f"chart {key}"), partial(app.open_chart, key), "the metric over the whole run")
                for key in sorted(app.model.series)]

    async def discover(self) -> Hits:
        if not self._app.showing_run:  # the fleet screen: no run to open screens of
            return
        for name, command, help_text in self._screens():
            yield DiscoveryHit(name, command, help=help_text)
        for text, command, help_text in self._findings() + self._charts():
            yield DiscoveryHit(Content(text), command, text=text, help=help_text)

    async def search(self, query: str) -> Hits:
        app = self._app
        if not app.showing_run:
            return
        step = landing_step(app.model.every_step(), int(query)) if query.strip().isdigit() else None
        if step is not None:
            yield Hit(1.0, Content(f"step {step}"), partial(app.open_step, step), text=f"step {step}",
                      help="the step's detail")
        matcher = self.matcher(query)
        for name, command, help_text in self._screens():
            if (score := matcher.match(name)) > 0:
                yield Hit(score, matcher.highlight(name), command, text=name, help=help_text)
        for text, command, help_text in self._findings() + self._charts():
            if (score := matcher.match(text)) > 0:
                yield Hit(score, Content(text), command, text=text, help=help_text)
