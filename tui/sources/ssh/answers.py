"""Questions a remote run's opening channel answers besides its backfill.

Every channel costs the box an sshd session and a login shell, whose start-up
files (conda, pyenv, modules) can take longer than the whole backfill of a
small log. The questions a session asks right after opening a run (which lines
of the log name its logger files, which accelerator tools the box has) are
therefore asked by the backfill's script itself: it runs them beside the grep
pieces, in the background, and prints each answer on the channel's stderr
(``remote_commands.backfill``), so the pieces do not wait for them. The answers
are kept under the text each question would have as a command of its own, and
used once: a question asked again later (a poller looking for tools anew) goes
to the box again.
"""

from __future__ import annotations

import asyncio

import asyncssh

# An answer: the command's exit status and its output.
Answer = tuple[int, bytes]


class Answers:
    """The answers to the questions an opening channel was asked, as they come."""

    def __init__(self) -> None:
        self._pending: dict[str, asyncio.Future[Answer | None]] = {}
        self._reading: asyncio.Task[None] | None = None
        self._others: list[bytes] = []  # lines among the answers that were none of them

    def expect(self, keys: list[str], stderr: asyncssh.SSHReader[bytes]) -> None:
        """Read the answers to the questions ``keys`` name, in that order, from ``stderr``."""
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in keys]
        self._pending.update(zip(keys, futures))
        self._reading = loop.create_task(_read(stderr, futures, self._others))

    async def take(self, command: str) -> Answer | None:
        """``command``'s answer, waiting for it if it is on its way; None when it was not
        asked, was taken already, or did not come (the channel closed first)."""
        future = self._pending.pop(command, None)
        return None if future is None else await future

    async def read(self) -> None:
        """Wait until the answers have all come (or cannot): the channel's stderr is then
        free for what follows on it."""
        if self._reading is not None:
            await asyncio.wait({self._reading})

    def others(self) -> list[bytes]:
        """The lines the channel's stderr carried among the answers that were none of them,
        taken once: a tool's complaint, or a line meant for after them that came early (the
        notice of ``tail -F`` following the log that it was truncated, before a slow question's
        answer)."""
        others, self._others = self._others, []
        return others

    def close(self) -> None:
        """Stop waiting for answers (the channel is closing): none that is missing comes."""
        if self._reading is not None:
            self._reading.cancel()


async def _read(stderr: asyncssh.SSHReader[bytes], futures: list[asyncio.Future[Answer | None]],
                others: list[bytes]) -> None:
    """Each ``ANSWER <status> <n>`` header and its n bytes, for each future in turn; a line
    between them is no answer, and is kept in ``others``."""
    try:
        for future in futures:
            line = await _line(stderr)
            while not line.startswith(b"ANSWER "):
                others.append(line)
                line = await _line(stderr)
            header = line.split()
            if len(header) != 3 or not header[1].isdigit() or not header[2].isdigit():
                return
            future.set_result((int(header[1]), await stderr.readexactly(int(header[2]))))
    except (asyncio.IncompleteReadError, OSError, asyncssh.Error, _Ended):
        return
    finally:
        for future in futures:
            if not future.done():
                future.set_result(None)


class _Ended(Exception):
    """The channel's stderr has nothing more to give."""


async def _line(stderr: asyncssh.SSHReader[bytes]) -> bytes:
    """The next line; _Ended once the stream has ended. ``readline`` gives ``b""`` only then
    (a blank line is ``b"\n"``), whether the box sent its EOF or the channel was closed under
    it: waiting for ``at_eof()`` alone spun at full CPU on a closed channel, which never says
    EOF."""
    line = await stderr.readline()
    if not line:
        raise _Ended
    return line
