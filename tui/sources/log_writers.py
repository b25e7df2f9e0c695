"""Finding a run's processes by who writes its log, on the log's host, and reading them, in
one round trip: for a run whose log names no pid and whose devices list none.

Read-only and with what every Linux box has: a fixed ``/bin/sh`` script whose only input is
the log's path, passed as its argument (quoted by ``shlex`` like every argv a runner sends,
and made ``./``-relative where it is relative, so it is never read as an option), never
interpolated into the script. It walks ``/proc/[0-9]*`` (only the account's own processes
have a readable ``fd`` folder; the rest is passed over) and compares each open descriptor
with the log by device and inode (``test -ef``: a path with spaces, newlines or `` (deleted)``
needs no string compared, and a replaced log's old writer does not match the new file). A
match prints ``writer PID FD FLAGS`` (``/proc/PID/fdinfo/FD``'s ``flags:``, which tell a
writer from a reader such as rlwatch or ``tail -f``); a writer whose standard input is a
pipe (``… | tee log``) gets ``feeds PID FD WRITER`` for each process whose fd 1 or 2 is that
same pipe. Then the words of :mod:`tui.sources.process_states`' read (``uptime``, ``hz``,
``stat``/``wchan``) for each of the account's processes with an open file (their parent is in
their stat, so the writers' children are known), read again after a pause in the same round
trip for the CPU share. Everything in the loops is a shell builtin (``test``, ``read``,
``printf``): no process per file. On this machine the same files are read directly.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from tui.parsers.log_writers import LogWriterScan, parse_log_writers
from tui.parsers.proc_stat import ProcAnswer
from tui.sources.accelerators.hosts import AcceleratorHost
from tui.sources.process_states import proc_text, read_twice
from tui.sources.ssh.remote_commands import operand

# The script: $1 the pause before the second reading (0: none), $2 the log's path.
SCAN_SCRIPT = (
    "pause=$1 log=$2 ws=\n"
    "r() {\n"
    "printf 'uptime %s\\nhz %s\\n' \"$(cat /proc/uptime)\" \"$(getconf CLK_TCK 2>/dev/null)\"\n"
    "for d in /proc/[0-9]*; do\n"
    "  [ -r \"$d/fd\" ] || continue\n"
    "  p=${d#/proc/} any=\n"
    "  for f in \"$d\"/fd/*; do\n"
    "    [ -L \"$f\" ] || continue\n"
    "    any=1\n"
    "    [ \"$1\" = scan ] && [ \"$f\" -ef \"$log\" ] || continue\n"
    "    fl=\n"
    "    { while read -r k v; do [ \"$k\" = flags: ] && fl=$v; done <\"$d/fdinfo/${f##*/}\"; } 2>/dev/null\n"
    "    printf 'writer %s %s %s\\n' \"$p\" \"${f##*/}\" \"$fl\"\n"
    # The writers (open for writing: O_WRONLY or O_RDWR in the octal flags) are followed up.
    "    case $fl in ''|*[!0-7]*) continue ;; esac\n"
    "    [ $((0$fl & 3)) -ne 0 ] || continue\n"
    "    case \" $ws \" in *\" $p \"*) ;; *) ws=\"$ws $p\" ;; esac\n"
    "  done\n"
    "  [ -n \"$any\" ] || continue\n"
    # A process names itself (its comm) as it likes, a newline included: one line all the same.
    "  s= w=\n"
    "  { while IFS= read -r l || [ -n \"$l\" ]; do s=\"$s$l \"; done <\"$d/stat\"; } 2>/dev/null\n"
    "  { IFS= read -r w <\"$d/wchan\"; } 2>/dev/null\n"
    "  printf 'stat %s %s\\nwchan %s %s\\n' \"$p\" \"$s\" \"$p\" \"$w\"\n"
    "done\n"
    "}\n"
    "r scan\n"
    "for w in $ws; do\n"
    "  [ -p \"/proc/$w/fd/0\" ] || continue\n"
    "  for d in /proc/[0-9]*; do\n"
    "    for n in 1 2; do\n"
    "      [ \"$d/fd/$n\" -ef \"/proc/$w/fd/0\" ] && printf 'feeds %s %s %s\\n' \"${d#/proc/}\" \"$n\" \"$w\"\n"
    "    done\n"
    "  done\n"
    "done\n"
    "printf 'py-spy %s\\n' \"$(command -v py-spy 2>/dev/null)\"\n"
    # POSIX sleep takes whole seconds; GNU's and BusyBox's take fractions too. Where nothing
    # writes the log there is no process to read again: no pause.
    "[ \"$pause\" = 0 ] || [ -z \"$ws\" ] || { sleep \"$pause\" 2>/dev/null || sleep 1; echo again; r; }\n"
    "true\n"
)


def scan_argv(log: str, pause_s: float) -> list[str]:
    """The argv a box runs for the scan: the fixed script, the pause and the log's path as its
    arguments (a relative path made ``./``-relative: never an option, never a command)."""
    return ["sh", "-c", SCAN_SCRIPT, "sh", f"{pause_s:g}", operand(log)]


async def read_log_writers(host: AcceleratorHost, log: str, pause_s: float) -> tuple[LogWriterScan, list[ProcAnswer]]:
    """Who writes ``log`` (its path on ``host``) and ``host``'s ``/proc`` on the account's
    processes now and, unless ``pause_s`` is 0 or nothing writes the log, again ``pause_s``
    later, in one round trip;
    SourceError when it cannot be read."""
    if not log:
        raise ValueError("no log path")
    found = _scan_here(log) if host.local else ""
    if host.local and not parse_log_writers(found).writers:
        pause_s = 0.0  # nothing writes the log: no process to read again (the script does the same)
    readings = await read_twice(host, scan_argv(log, pause_s), pause_s,
                                lambda first: (found if first else "") + _read_here(), "who writes the log")
    return parse_log_writers(readings[0][0]), [answer for _, answer in readings]


def _scan_here(log: str) -> str:
    """The script's ``writer`` and ``feeds`` words, from this machine's ``/proc``."""
    try:
        wanted = _identity(log)
    except OSError:
        return ""
    lines, writers = [], []
    processes = list(_own_processes())
    for pid, fds in processes:
        for fd in fds:
            if _identity_or_none(f"/proc/{pid}/fd/{fd}") == wanted:
                lines.append(f"writer {pid} {fd} {_flags(pid, fd)}")
                writers += [pid] if pid not in writers else []
    for writer in writers:
        try:
            pipe = os.stat(f"/proc/{writer}/fd/0")
        except OSError:
            continue
        if stat.S_ISFIFO(pipe.st_mode):
            lines.extend(f"feeds {pid} {fd} {writer}" for pid, fds in processes for fd in (1, 2)
                         if fd in fds and _identity_or_none(f"/proc/{pid}/fd/{fd}") == (pipe.st_dev, pipe.st_ino))
    return "".join(line + "\n" for line in lines)


def _read_here() -> str:
    """The script's reading, from this machine's ``/proc``: each of the account's processes
    with an open file."""
    lines = [f"uptime {proc_text(Path('/proc/uptime'))}", f"hz {os.sysconf('SC_CLK_TCK')}"]
    for pid, fds in _own_processes():
        if fds:
            lines.append(f"stat {pid} {proc_text(Path(f'/proc/{pid}/stat'))}")
            lines.append(f"wchan {pid} {proc_text(Path(f'/proc/{pid}/wchan'))}")
    lines.append(f"py-spy {shutil.which('py-spy') or ''}")
    return "\n".join(lines) + "\n"


def _own_processes() -> Iterator[tuple[int, set[int]]]:
    """Each process whose ``fd`` folder this account may read, with its open descriptors."""
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                yield int(name), {int(fd) for fd in os.listdir(f"/proc/{name}/fd") if fd.isdigit()}
            except OSError:  # another account's, or gone
                continue


def _identity(path: str) -> tuple[int, int]:
    """The device and inode ``path`` opens (what ``test -ef`` compares)."""
    found = os.stat(path)
    return found.st_dev, found.st_ino


def _identity_or_none(path: str) -> tuple[int, int] | None:
    """``_identity``, None where it cannot be read (a descriptor closed meanwhile)."""
    try:
        return _identity(path)
    except OSError:
        return None


def _flags(pid: int, fd: int) -> str:
    """The octal ``flags:`` of ``/proc/PID/fdinfo/FD``; "" where it cannot be read."""
    try:
        text = Path(f"/proc/{pid}/fdinfo/{fd}").read_text(errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "flags":
            return value.strip()
    return ""
