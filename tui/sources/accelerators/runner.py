"""How accelerator pollers run a command, wherever the host is.

A ``CommandRunner`` runs an argv and returns its output, or streams its
output line by line for long-lived commands (``nvidia-smi … -l 2``). The local
implementation uses subprocesses; the SSH source provides one that runs the
argv (``shlex.join``-quoted) over its connection. Both report failure the same
way: ``ToolMissing`` when the program is not there (so the next tool is tried
quietly), ``CommandFailed`` with the output otherwise (so the status line can
say why, e.g. "no NVIDIA devices found").
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncGenerator, Sequence
from typing import Protocol

# A shell's "command not found" status; remote runners see this instead of ENOENT.
NOT_FOUND_STATUS = 127
_LINE_LIMIT = 1 << 20  # nvidia-smi rows are short; a megabyte is a broken stream


class ToolMissing(Exception):
    """The program is not installed (or not on PATH) on that host."""

    def __init__(self, tool: str) -> None:
        super().__init__(f"{tool}: not found")
        self.tool = tool


class CommandFailed(Exception):
    """The program ran and failed: non-zero status, timeout, or a stream that broke."""

    def __init__(self, argv: Sequence[str], returncode: int | None, output: bytes, reason: str = "") -> None:
        super().__init__(reason or f"{argv[0]} exited with status {returncode}")
        self.argv = tuple(argv)
        self.returncode = returncode
        self.output = output


def failure(argv: Sequence[str], returncode: int | None, output: bytes) -> ToolMissing | CommandFailed:
    """The exception for a command that exited with ``returncode``: remote runners
    use this too, so "command not found" means the same everywhere."""
    if returncode == NOT_FOUND_STATUS or b"command not found" in output[-300:]:
        return ToolMissing(argv[0])
    return CommandFailed(argv, returncode, output)


class CommandRunner(Protocol):
    """Runs commands on one host. Implementations must not raise anything but
    ``ToolMissing`` and ``CommandFailed`` for a command's own failure."""

    async def run(self, argv: Sequence[str], timeout: float = 30.0) -> bytes:
        """Run ``argv`` to completion and return its stdout."""
        ...

    def stream_lines(self, argv: Sequence[str]) -> AsyncGenerator[bytes, None]:
        """Start ``argv`` and yield each line of its output (without the newline) as it
        comes; stop the program when the caller stops iterating. A program that exits
        non-zero raises ``CommandFailed`` after its last line."""
        ...


class LocalRunner:
    """Runs commands on this machine as subprocesses (no shell).

    Each command runs in a process group of its own, and stopping it kills the group: a
    tool that is a wrapper script (a site's ``nvidia-smi`` that runs the real one, a
    container's shim) leaves its children holding the output pipe when only it is killed.
    They outlived rlwatch, and asyncio waited for the pipe to close, so quitting the
    dashboard hung, or ended with "Exception ignored … Event loop is closed" when the loop
    closed first.
    """

    async def _spawn(self, argv: Sequence[str], merge_stderr: bool) -> asyncio.subprocess.Process:
        try:
            return await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
                limit=_LINE_LIMIT, start_new_session=True)
        except FileNotFoundError:
            raise ToolMissing(argv[0]) from None
        except OSError as error:  # not executable, too many processes…
            raise CommandFailed(argv, None, str(error).encode()) from None

    async def run(self, argv: Sequence[str], timeout: float = 30.0) -> bytes:
        process = await self._spawn(argv, merge_stderr=False)
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
        except asyncio.TimeoutError:
            raise CommandFailed(argv, None, b"", f"{argv[0]} did not answer within {timeout:g} s") from None
        finally:
            await _stop(process)
        if process.returncode != 0:
            raise failure(argv, process.returncode, stdout + stderr)
        return stdout

    async def stream_lines(self, argv: Sequence[str]) -> AsyncGenerator[bytes, None]:
        process = await self._spawn(argv, merge_stderr=True)
        assert process.stdout is not None
        recent: list[bytes] = []
        try:
            while line := await process.stdout.readline():
                recent = (recent + [line])[-20:]
                yield line.rstrip(b"\r\n")
            returncode = await process.wait()
        except ValueError:  # a line over the limit: not the tool's normal output
            raise CommandFailed(argv, None, b"".join(recent), f"{argv[0]} printed an endless line") from None
        finally:
            await _stop(process)
        if returncode != 0:
            raise failure(argv, returncode, b"".join(recent))


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Kill the process and whatever it started (its process group), and reap it: no
    zombie, nothing left running, no transport left for the loop's end to find.

    The reaping is finished even when the caller is cancelled meanwhile (the loop's
    shutdown cancels every task still running): a killed process exits at once, and a
    transport left unreaped is the "Event loop is closed" traceback at exit."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # the group is its own (start_new_session)
    waiting = asyncio.ensure_future(process.wait())
    cancelled = False
    while not waiting.done():
        try:
            await asyncio.shield(waiting)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
