"""Telling the user once when something goes critical: which findings are new, and ``--on-critical``.

Findings are grouped and re-evaluated on every step, so "new" means a
finding that was not critical before, by what it is about (``identity``);
each alerts once, however many more steps break it or however it grows.
"""

from __future__ import annotations

import asyncio
import json
import shlex

from tui.durations import word_duration
from tui.parsers.text import safe_data
from tui.rules.findings import Finding, Severity

# A hook that hangs must not pile up processes: give it this long.
HOOK_TIMEOUT_S = 30.0


def identity(finding: Finding) -> tuple[str, str | None, object]:
    """What a finding is about, the same however often it is judged again and however it grows:
    a failure by where its block starts in the log (a traceback read half-written is named
    by its last frame and then, once read whole, by its exception and kind: one crash), a
    metric's by the metric, a job's by the state the scheduler gave, and a stall by the step
    it came after (its seconds grow at every judging; a run that goes on and stalls again
    later is news again)."""
    if finding.offset is not None:
        return finding.rule, finding.metric, finding.offset
    if finding.metric is not None:
        return finding.rule, finding.metric, None
    if isinstance(finding.value, str):
        return finding.rule, None, finding.value
    return finding.rule, None, finding.first_step


class CriticalAlerts:
    """Remembers which critical findings have been announced."""

    def __init__(self) -> None:
        self._announced: set[tuple[str, str | None, object]] = set()

    def new(self, findings: list[Finding]) -> list[Finding]:
        """The critical findings not announced before (and now marked announced)."""
        fresh = []
        for finding in findings:
            key = identity(finding)
            if finding.severity == Severity.CRITICAL and finding.counts and key not in self._announced:
                self._announced.add(key)
                fresh.append(finding)
        return fresh

    def reset(self) -> None:
        """Forget (the log was replaced: its findings are a new run's)."""
        self._announced.clear()


async def run_hook(command: str, finding: Finding, run_label: str) -> str | None:
    """Run the user's ``--on-critical`` command with the finding as JSON on stdin.

    The command runs through the user's shell, as they typed it (it is
    theirs, on their machine). Returns a one-line problem, or None.
    """
    # The finding quotes the log (a key, a crash line): the hook may print it, so it gets
    # the visible form every output shows, not the raw control characters.
    payload = json.dumps(safe_data({"run": run_label, **finding.to_json()})).encode()
    try:
        process = await asyncio.create_subprocess_shell(
            command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE)
    except OSError as error:
        return f"--on-critical could not start: {error}"
    try:
        _, stderr = await asyncio.wait_for(process.communicate(payload), HOOK_TIMEOUT_S)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        return f"--on-critical {shlex.quote(command)} ran over {word_duration(HOOK_TIMEOUT_S)} and was stopped"
    if process.returncode != 0:
        last = stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return f"--on-critical exited with {process.returncode}: {last[0][:200]}"
    return None
