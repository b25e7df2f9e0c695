"""Running the accelerator tools on the training box over the run's SSH connection.

The same ``CommandRunner`` contract as ``LocalRunner``: every argv is joined
with ``shlex`` (nothing the box runs is built from unquoted text), and a
command's failure becomes ``ToolMissing``/``CommandFailed``. A non-login SSH
shell often lacks npu-smi's directory on PATH, so the usual places are added.
"""

from __future__ import annotations

import shlex
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

import asyncssh

from tui.sources.accelerators.runner import CommandFailed, failure
from tui.sources.base import SourceError
from tui.sources.ssh import box_shell

# Where Ascend and NVIDIA installs put their tools when a non-login shell's PATH lacks them.
EXTRA_PATH = "/usr/local/sbin:/usr/local/Ascend/driver/tools:/usr/local/nvidia/bin"


def remote_command(argv: Sequence[str]) -> str:
    """The shell text that runs ``argv`` on the box (also the key of an answer read before)."""
    return f"PATH=\"$PATH:{EXTRA_PATH}\" exec {shlex.join(argv)}"


class SshRunner:
    """Runs commands on one host through an open asyncssh connection."""

    def __init__(self, connection: Callable[[], asyncssh.SSHClientConnection], host: str,
                 answered: Callable[[str], Awaitable[tuple[int, bytes] | None]] | None = None
                 ) -> None:
        """``connection`` gives the connection to use now: a log's source replaces its
        connection when it reconnects, and the tools must run over the new one.
        ``answered``: the answer (exit status, stdout) to a command by its ``remote_command``
        text, when a channel opened for something else asked it already (the log's backfill
        asks which tools the box has; ``answers``), else None and the command runs."""
        self.connection = connection
        self.host = host  # named when the box does not answer
        self.answered = answered

    async def run(self, argv: Sequence[str], timeout: float = 30.0) -> bytes:
        if self.answered and (known := await self.answered(remote_command(argv))) is not None:
            status, stdout = known
            if status != 0:
                raise failure(argv, status, stdout)
            return stdout
        try:
            result = await box_shell.run(self.connection(), remote_command(argv), self.host,
                                         deadline_s=timeout)
        except SourceError as error:
            raise CommandFailed(argv, None, b"", f"{argv[0]}: {error}") from None
        except (OSError, asyncssh.Error) as error:
            raise CommandFailed(argv, None, str(error).encode()) from None
        if result.exit_status != 0:
            raise failure(argv, result.exit_status, result.stdout + result.stderr)
        return result.stdout

    async def stream_lines(self, argv: Sequence[str]) -> AsyncGenerator[bytes, None]:
        try:
            process = await box_shell.start(self.connection(), remote_command(argv), self.host,
                                            merge_stderr=True)
        except (OSError, asyncssh.Error, SourceError) as error:
            raise CommandFailed(argv, None, str(error).encode()) from None
        recent: list[bytes] = []
        try:
            while line := await process.stdout.readline():
                recent = (recent + [line])[-20:]
                yield line.rstrip(b"\r\n")
            await process.wait_closed()
        finally:
            process.close()  # the remote -l loop ends with the channel
        status = process.exit_status
        if status not in (0, None):
            raise failure(argv, status, b"".join(recent))
