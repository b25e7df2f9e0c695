"""Every command rlwatch sends to a box: started by the login shell as ``/bin/sh``, its
answer framed so that nothing the login shell prints can be taken for it.

OpenSSH runs the command it is sent through the account's login shell
(``$SHELL -c COMMAND``), after that shell's start-up files. Two things follow.
The command is parsed by that shell, which may be bash, dash, zsh, fish, tcsh
or BusyBox sh, and fish or tcsh read POSIX quoting differently (a backslash in
single quotes, a newline in a quoted word). And the start-up files may print
(``module load`` banners, conda and quota notices, ``stty: not a tty``) on
stdout and stderr, before anything the command prints.

So the login shell is sent one fixed command that every one of those shells
parses alike, ``exec /bin/sh -s``, and the POSIX script goes on its standard
input, where no login shell reads it. The script's first act is to print a
marker line carrying a random nonce made for this command alone, on stdout
and on stderr; everything before the marker is the greeting, dropped (and kept
for the error message when no marker comes). No start-up file can forge the
marker: it never sees the nonce.

The script is sent right behind the exec request (``_Pipelined``), so it costs
no round trip the command line did not. It goes inside one brace group ended by ``exit``: a shell reading
its script from a pipe (dash reads in blocks) parses the whole group before
it runs any of it, so no byte written later for the script's own standard
input (a chosen path; the channel's end, which a follower waits for as EOF)
is swallowed as script. A one-shot command's standard input is closed after
the script, as asyncssh's ``run`` did; a streaming one's stays open until
the channel closes. Every command gets a deadline for its marker: a box that
takes the login and never starts the shell (an ``authorized_keys``
``command="…"``, a start-up file waiting on a terminal) is reported by name.

The tools a script needs (grep, tail…) are looked for before it runs, in the
same round trip: a box without one says ``command not found: grep`` instead
of an empty or cut-short answer.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import asyncssh

from tui.durations import word_duration
from tui.parsers.text import safe_text
from tui.sources.base import SourceError

if TYPE_CHECKING:
    from asyncssh.channel import SSHChannel

# A remote command's process, its output read as bytes.
Process = asyncssh.SSHClientProcess[bytes]

# What the login shell is asked to do: parsed alike by bash, dash, zsh, fish, tcsh/csh and
# BusyBox sh (one word of plain characters after ``exec``, no quote, no variable).
LOGIN_COMMAND = "exec /bin/sh -s"
# How long a box may take from the channel's opening to the marker: its login shell's
# start-up files (conda, modules) take seconds at worst; a box silent this long is stuck.
MARKER_DEADLINE_S = 30.0
# How long a one-shot command (a range read, a listing, a tool's answer) may take in all.
RUN_DEADLINE_S = 120.0
# How much of a greeting an error message shows.
_SHOWN_BYTES = 120
# The tools scripts cannot do without (each has no fallback in them), looked for by name.
_NEEDED = ("grep", "tail", "head", "find", "od", "cut", "wc")
_NEEDED_WORD = re.compile(r"(?<![\w./-])(" + "|".join(_NEEDED) + r")(?![\w.-])")


@dataclass(frozen=True, slots=True)
class Answer:
    """A one-shot command's exit status and output (both streams, bytes)."""

    exit_status: int | None
    stdout: bytes
    stderr: bytes


def needed_tools(command: str) -> list[str]:
    """The tools of ``_NEEDED`` that ``command`` runs, in order, each once."""
    return list(dict.fromkeys(_NEEDED_WORD.findall(command)))


def framed_script(command: str, nonce: str) -> bytes:
    """What goes on ``/bin/sh``'s standard input: the tool check, the two markers, then
    ``command``, all in one brace group that ends the shell (see the module's docstring)."""
    tag = f"RLWATCH:{nonce}"
    tools = needed_tools(command)
    check = (f"for t in {' '.join(tools)}; do command -v \"$t\" >/dev/null 2>&1 || "
             f"{{ printf '%s:missing %s\\n' {tag} \"$t\"; exit 127; }}; done\n" if tools else "")
    return (f"{{\n{check}printf '%s:1\\n' {tag}; printf '%s:2\\n' {tag} >&2\n"
            f"{command}\n}}; exit\n").encode()


def _marker(nonce: str, stream: int) -> re.Pattern[bytes]:
    return re.compile(rb"RLWATCH:" + nonce.encode() + rb":(" + str(stream).encode()
                      + rb"|missing [^\n]{0,64})\n")


async def start(connection: asyncssh.SSHClientConnection, command: str, host: str, *,
                merge_stderr: bool = False, close_stdin: bool = False,
                deadline_s: float | None = None) -> Process:
    """A process on the box running the POSIX ``command``, its stdout and stderr read past
    the login shell's greeting (``merge_stderr``: both on stdout, as asyncssh's
    ``stderr=STDOUT``). Its standard input stays open for the script unless
    ``close_stdin``. SourceError, naming ``host``, when no marker comes: the box did not
    answer in time, the login shell printed something else and ended, or a needed tool
    is missing. asyncssh's and the socket's own errors pass through."""
    nonce = secrets.token_hex(16)
    script = framed_script(command, nonce)
    deadline = MARKER_DEADLINE_S if deadline_s is None else deadline_s
    # No pty (a user's RequestTTY would mangle the bytes), no X11: nothing is asked of the
    # server between the channel's opening and the exec request (see _Pipelined).
    _, session = await connection.create_session(
        lambda: _Pipelined(script, close_stdin), LOGIN_COMMAND, encoding=None, request_pty=False,
        x11_forwarding=False)
    process = cast(_Pipelined, session)
    try:
        await process.redirect(asyncssh.PIPE, asyncssh.PIPE,
                               asyncssh.STDOUT if merge_stderr else asyncssh.PIPE)
        await asyncio.wait_for(_past_greeting(process, nonce, host, merge_stderr), deadline)
    except (asyncio.TimeoutError, TimeoutError):
        said = await _printed_so_far(process)
        process.close()
        raise SourceError(_silent(host, deadline, said)) from None
    except BaseException:
        process.close()
        raise
    return process


class _Pipelined(asyncssh.SSHClientProcess[bytes]):
    """A process whose script is sent right behind its exec request, not after the reply:
    the command line used to travel in the request itself, and waiting for the reply
    before sending the script would add a round trip to every command. asyncssh opens
    the channel, calls ``connection_made`` and sends the exec request with nothing to
    wait for in between (no pty, no X11 asked: ``start``), so the write scheduled here
    runs once the request is on its way; the server reads the channel's data in order,
    after the request that started the shell."""

    def __init__(self, script: bytes, close_stdin: bool) -> None:
        super().__init__()
        self._script, self._close_stdin = script, close_stdin

    def connection_made(self, chan: SSHChannel[bytes]) -> None:
        super().connection_made(chan)
        asyncio.get_running_loop().call_soon(self._send_script, chan)

    def _send_script(self, chan: SSHChannel[bytes]) -> None:
        if chan.is_closing():
            return
        chan.write(self._script)
        if self._close_stdin:
            chan.write_eof()


async def run(connection: asyncssh.SSHClientConnection, command: str, host: str, *,
              deadline_s: float = RUN_DEADLINE_S) -> Answer:
    """The one-shot ``command``'s exit status and output, its standard input closed after
    the script; SourceError naming ``host`` when it does not end within ``deadline_s``."""
    process = await start(connection, command, host, close_stdin=True,
                          deadline_s=min(deadline_s, MARKER_DEADLINE_S))
    try:
        stdout, stderr = await asyncio.wait_for(
            asyncio.gather(process.stdout.read(), process.stderr.read()), deadline_s)
        await asyncio.wait_for(process.wait_closed(), deadline_s)
    except (asyncio.TimeoutError, TimeoutError):
        raise SourceError(f"{host}: the box did not finish a command within "
                          f"{word_duration(deadline_s)}") from None
    finally:
        process.close()
    return Answer(process.exit_status, stdout, stderr)


async def _past_greeting(process: Process, nonce: str, host: str, merged: bool) -> None:
    """Read stdout (then stderr, or stdout again when merged) up to and including its
    marker; SourceError when a tool is missing or a stream ends first."""
    for stream, reader in ((1, process.stdout), (2, process.stdout if merged else process.stderr)):
        try:
            said = await reader.readuntil(_marker(nonce, stream), max_separator_len=128)
        except asyncio.IncompleteReadError as error:
            raise SourceError(_unreadable(host, error.partial)) from None
        tail = said[said.rfind(b"RLWATCH:"):]
        if b":missing " in tail:
            tool = tail.split(b":missing ", 1)[1].strip().decode("ascii", "replace")
            raise SourceError(f"{host}: command not found: {safe_text(tool)}")


def _shown(printed: bytes) -> str:
    """The start of what a login shell printed, made safe and quoted (``…`` when cut)."""
    shown = safe_text(printed[:_SHOWN_BYTES].decode("utf-8", "replace"))
    return f"{shown!r}{'…' if len(printed) > _SHOWN_BYTES else ''}"


def _unreadable(host: str, greeting: bytes) -> str:
    if not greeting.strip():
        return (f"{host}: the login shell ended without running the command (is /bin/sh there, "
                "or does an authorized_keys command= replace it?)")
    return f"{host}: the login shell printed something we could not read past: {_shown(greeting)}"


async def _printed_so_far(process: Process) -> bytes:
    """What the login shell printed before it went quiet (the marker search left it
    buffered): a start-up file waiting for a terminal says who it is."""
    try:
        return await asyncio.wait_for(process.stdout.read(_SHOWN_BYTES + 1), 0.2)
    except (asyncio.TimeoutError, TimeoutError, OSError, asyncssh.Error):
        return b""


def _silent(host: str, deadline_s: float, said: bytes) -> str:
    after = f"; its login shell printed {_shown(said)} and then nothing" if said.strip() else ""
    return (f"{host}: logged in, but the box did not answer within {word_duration(deadline_s)}{after} "
            "(a login shell or an authorized_keys command= that never starts the command?)")
