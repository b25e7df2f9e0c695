"""Reading a run's processes on their host: ``/proc/PID/stat`` and ``/proc/PID/wchan`` of a few
pids and the box's ``/proc/uptime``, in one round trip; and a ``py-spy dump`` of one, where the
box already has py-spy.

Read-only and with what every Linux box has: ``cat`` of files under ``/proc`` and ``getconf``,
in a fixed ``/bin/sh`` script whose pids come as its arguments (numbers, checked, and quoted
by ``shlex`` like every argv a runner sends: :mod:`tui.sources.ssh.ssh_runner`, through
:mod:`tui.sources.ssh.box_shell`). The same round trip asks ``command -v py-spy``: whether
the failure view can offer a dump. rlwatch never installs py-spy. On this machine the same
files are read directly. Both give the words :func:`tui.parsers.proc_stat.parse_proc_answer`
reads (the recorded hangs in tests/fixtures/logs/generated/hangs are in them too).
"""

from __future__ import annotations

import asyncio
import math
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from tui.parsers.proc_stat import ProcAnswer, parse_proc_answer
from tui.sources.accelerators.hosts import AcceleratorHost
from tui.sources.accelerators.runner import CommandFailed, ToolMissing
from tui.sources.base import SourceError

# The script the box runs, its pids as arguments ($@) after a pause: nothing in it comes from
# the run. A pause other than 0 reads them all again after it, in the same session (a CPU share
# needs two readings; a second login shell for it would double what a check costs the box).
READ_SCRIPT = (
    "pause=$1; shift\n"
    "r() {\n"
    "printf 'uptime %s\\nhz %s\\n' \"$(cat /proc/uptime)\" \"$(getconf CLK_TCK 2>/dev/null)\"\n"
    "for p in \"$@\"; do\n"
    # A process names itself (its comm) as it likes, a newline included: one line all the same.
    "  printf 'stat %s %s\\n' \"$p\" \"$(tr '\\n' ' ' 2>/dev/null <\"/proc/$p/stat\")\"\n"
    "  printf 'wchan %s %s\\n' \"$p\" \"$(cat \"/proc/$p/wchan\" 2>/dev/null)\"\n"
    "done\n"
    "printf 'py-spy %s\\n' \"$(command -v py-spy 2>/dev/null)\"\n"
    "}\n"
    "r \"$@\"\n"
    # POSIX sleep takes whole seconds; GNU's and BusyBox's take fractions too.
    "[ \"$pause\" = 0 ] || { sleep \"$pause\" 2>/dev/null || sleep 1; echo again; r \"$@\"; }\n"
)
# The line between the two readings of a read twice.
AGAIN = "again"
# How long a read may take: a handful of small files.
READ_DEADLINE_S = 20.0
# How long a py-spy dump may take (it pauses the process while it reads its stacks).
DUMP_DEADLINE_S = 30.0


async def read_process_states(host: AcceleratorHost, pids: Sequence[int]) -> ProcAnswer:
    """What ``host``'s ``/proc`` says of ``pids`` now; SourceError when it cannot be read."""
    return (await read_process_states_twice(host, pids, 0.0))[0]


async def read_process_states_twice(host: AcceleratorHost, pids: Sequence[int], pause_s: float) -> list[ProcAnswer]:
    """``host``'s ``/proc`` on ``pids`` now and, unless ``pause_s`` is 0, again ``pause_s``
    later, in one round trip; SourceError when it cannot be read."""
    if any(pid <= 0 for pid in pids):
        raise ValueError(f"not a process id: {min(pids)}")
    readings = await read_twice(host, ["sh", "-c", READ_SCRIPT, "sh", f"{pause_s:g}", *map(str, pids)], pause_s,
                                lambda first: _read_here(pids), "the processes")
    return [answer for _, answer in readings]


async def read_twice(host: AcceleratorHost, argv: Sequence[str], pause_s: float, read_here: Callable[[bool], str],
                     what: str) -> list[tuple[str, ProcAnswer]]:
    """The answer of a read of ``/proc`` on ``host``: ``argv`` run there (its script prints
    ``AGAIN`` between its two readings), or on this machine ``read_here(first)`` once and,
    unless ``pause_s`` is 0, again ``pause_s`` later; per reading its text and what
    :func:`parse_proc_answer` reads in it. SourceError naming ``what`` when it cannot be read
    (a reading without its ``uptime``)."""
    if pause_s < 0 or not math.isfinite(pause_s):
        raise ValueError(f"not a pause: {pause_s}")
    if host.local:
        texts = [read_here(True)]
        if pause_s:
            await asyncio.sleep(pause_s)
            texts.append(read_here(False))
    else:
        try:
            text = (await host.runner.run(argv, READ_DEADLINE_S + pause_s)).decode("utf-8", "replace")
        except (ToolMissing, CommandFailed) as error:
            raise SourceError(f"{host.name}: {what} could not be read: {error}") from None
        texts = text.split(f"\n{AGAIN}\n") if pause_s else [text]
    readings = [(text, answer) for text in texts if (answer := parse_proc_answer(text)) is not None]
    if not readings or len(readings) < len(texts):
        raise SourceError(f"{host.name}: {what} could not be read (no /proc/uptime)")
    return readings


async def py_spy_dump(host: AcceleratorHost, py_spy: str, pid: int) -> str:
    """``py-spy dump --pid PID`` on ``host`` (``py_spy`` its path there, as ``command -v``
    said), stdout and stderr; SourceError with py-spy's own words when it fails."""
    if pid <= 0:
        raise ValueError(f"not a process id: {pid}")
    program = py_spy if py_spy.startswith("/") else "py-spy"
    argv = [program, "dump", "--pid", str(pid)]
    try:
        return (await host.runner.run(argv, DUMP_DEADLINE_S)).decode("utf-8", "replace")
    except ToolMissing:
        raise SourceError(f"py-spy is not installed on {host.name}; rlwatch never installs anything") from None
    except CommandFailed as error:
        said = error.output.decode("utf-8", "replace").strip()
        raise SourceError(f"py-spy on {host.name}: {said or error}") from None


def _read_here(pids: Sequence[int]) -> str:
    """The script's words, from this machine's ``/proc``."""
    lines = [f"uptime {proc_text(Path('/proc/uptime'))}", f"hz {os.sysconf('SC_CLK_TCK')}"]
    for pid in pids:
        lines.append(f"stat {pid} {proc_text(Path(f'/proc/{pid}/stat'))}")
        lines.append(f"wchan {pid} {proc_text(Path(f'/proc/{pid}/wchan'))}")
    lines.append(f"py-spy {shutil.which('py-spy') or ''}")
    return "\n".join(lines) + "\n"


def proc_text(path: Path) -> str:
    """A /proc file's text on one line; "" where it cannot be read (the process is gone)."""
    try:
        return path.read_text(errors="replace").replace("\n", " ").strip()
    except OSError:
        return ""
