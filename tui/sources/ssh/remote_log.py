"""A run's log on another machine, as a LogSource.

Backfill without copying the log: ``grep -b`` runs on the box over the bytes
present when we looked, in several pieces at once (one per CPU there), and
sends back only the lines the scanner wants, with their offsets. Then
``tail -F`` streams new bytes from there. The connection
is shared by every command; when it drops, the source says so, reconnects
with backoff and resumes from the last byte it delivered, so nothing is lost
or read twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace

from tui.sources.base import CaughtUp, Data, Lines, Reset, SourceError, SourceEvent, Status
from tui.sources.grep_filter import drain, in_order
from tui.sources.ssh import remote_commands
from tui.sources.ssh.target import RemoteTarget

_CHUNK = 1 << 20
_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
# What GNU tail -F says on stderr when the file shrank under it.
_RESTARTED = "file truncated"


class RemoteLog:
    """A log file (or a run directory's log) on ``target``'s host."""

    def __init__(self, target: RemoteTarget, prefilter: Sequence[bytes] = (),
                 accept_new_host_key: bool = False, piece_bytes: int = 64 << 20,
                 run_dir: str | None = None) -> None:
        """``run_dir``: the run directory the log belongs to, when the user named it
        (``--log``); a directory target sets it in ``connect``."""
        self.target = target
        self.prefilter = tuple(prefilter)
        self.accept_new_host_key = accept_new_host_key
        # The smallest piece worth its own grep; a test makes it small to see the cuts.
        self.piece_bytes = piece_bytes
        self.path = target.path
        self.run_dir = run_dir
        self._conn = None
        self._owns_connection = True
        # The backfill's plan and first piece, started by connect() for a log file.
        self._first: _FirstPiece | None = None

    @classmethod
    def sharing(cls, other: RemoteLog, path: str) -> RemoteLog:
        """Another file of the same host, read over ``other``'s open connection."""
        source = cls(replace(other.target, path=path), accept_new_host_key=other.accept_new_host_key)
        source._conn, source._owns_connection = other.connection, False
        return source

    @property
    def connection(self):
        """The open asyncssh connection (shared with the accelerator pollers)."""
        return self._conn

    @property
    def label(self) -> str:
        return f"{self.target.host}:{self.path}"

    async def connect(self) -> str | None:
        """Connect, and find the log when the target is a run directory (one round trip).

        For a log file, the same round trip plans the backfill and starts its
        last piece, which ``stream`` then reads; a second channel, opened
        meanwhile, waits to be told the bounds of the first piece.
        """
        from tui.sources.ssh.connection import connect

        self._conn = await connect(self.target, self.accept_new_host_key)
        spare = (asyncio.create_task(self._open(
            remote_commands.grep_piece_when_told(self.target.path, self.prefilter)))
            if self.prefilter else None)
        try:
            process = await self._open(
                remote_commands.discover(self.target.path, self.prefilter, self.piece_bytes))
            head = (await process.stdout.readline()).strip()
            if head == b"FILE":
                self._first = await _FirstPiece.read(process, self.label,
                                                     await spare if spare else None)
                spare = None
                return None
            try:
                rest = (await process.stdout.read()).decode("utf-8", "replace")
            finally:
                process.close()
        finally:
            if spare is not None:
                spare.cancel()
                with contextlib.suppress(asyncio.CancelledError, SourceError):
                    (await spare).close()
        if head == b"MISSING":
            raise SourceError(f"{self.label}: no such file or directory on {self.target.host}")
        if head != b"DIR":
            raise SourceError(f"{self.label}: permission denied")
        candidates = []
        for line in rest.split("\0"):
            mtime, has_steps, path = (line.split(" ", 2) + ["", ""])[:3]
            if path and mtime.isdigit():
                candidates.append((has_steps == "1", int(mtime), path))
        if not candidates:
            raise SourceError(f"{self.label}: no *.log, *.out or *.txt file found; pass --log FILE")
        with_steps = [c for c in candidates if c[0]]
        chosen = max(with_steps or candidates, key=lambda c: c[1])
        self.path = chosen[2]
        self.run_dir = self.target.path
        why = "with verl step lines" if with_steps else "none has step lines yet"
        return f"watching {self.label} (newest of {len(candidates)} log file(s) {why})"

    async def _open(self, command: str):
        """A remote process for ``command`` (bytes out), or SourceError when the connection fails."""
        import asyncssh

        try:
            return await self._conn.create_process(command, encoding=None)
        except (OSError, asyncssh.Error) as error:
            raise SourceError(f"{self.target.host}: connection lost: {error}") from None

    def use_log(self, log: str) -> None:
        """``--log``: a file inside the run directory (or an absolute path) instead of discovery."""
        self.path = log if log.startswith("/") else f"{self.target.path.rstrip('/')}/{log}"
        self._drop_first_piece()

    def _drop_first_piece(self) -> None:
        if self._first is not None:
            self._first.close()
            self._first = None

    async def run(self, command: str, binary: bool = False):
        """``command``'s output on the box (text, or bytes with ``binary``)."""
        import asyncssh

        try:
            result = await self._conn.run(command, encoding=None if binary else "utf-8",
                                          errors="replace", check=False)
        except (OSError, asyncssh.Error) as error:
            raise SourceError(f"{self.target.host}: connection lost: {error}") from None
        return result.stdout

    async def stream(self, start: int, follow: bool) -> AsyncIterator[SourceEvent]:
        """Backfill through grep on the box (from 0), then follow; reconnect when dropped."""
        offset = start
        if start == 0 and self.prefilter:
            async for event in self._backfill(follow):
                yield event
                if isinstance(event, Lines):
                    offset = event.resume_at
            if not follow:
                return
        self._drop_first_piece()
        attempt = 0
        while True:
            try:
                async for event in self._read_from(offset, follow):
                    if isinstance(event, Data):
                        offset = event.offset + len(event.data)
                        attempt = 0
                    elif isinstance(event, Reset):
                        offset = 0
                    yield event
                return
            except _Dropped as dropped:
                if not follow:
                    raise SourceError(f"{self.target.host}: connection lost: {dropped}") from None
                delay = _BACKOFF_S[min(attempt, len(_BACKOFF_S) - 1)]
                attempt += 1
                yield Status(f"connection to {self.target.host} lost ({dropped}); reconnecting in "
                             f"{delay:.0f} s", ok=False)
                await asyncio.sleep(delay)
                try:
                    await self.close()
                    from tui.sources.ssh.connection import connect

                    self._conn = await connect(self.target, self.accept_new_host_key)
                    yield Status(f"reconnected to {self.target.host}; resuming at byte {offset}")
                except SourceError as error:
                    yield Status(f"{error}; retrying", ok=False)

    async def _backfill(self, follow: bool) -> AsyncIterator[Lines | Data]:
        """Lines of ``[0, RESUME)`` matching the prefilter, in order, from one grep per piece;
        without ``follow``, then the bytes from RESUME to the end, fetched meanwhile.

        The last piece comes on the channel that made the plan.
        """
        import asyncssh

        first, self._first = self._first, None
        if first is None:
            first = await _FirstPiece.read(await self._open(
                remote_commands.plan(self.path, self.prefilter, self.piece_bytes)), self.label)
        plan = first.plan
        starts = [0, *plan.cuts]
        queues = [asyncio.Queue() for _ in starts]
        readers = [asyncio.create_task(self._grep_piece(start, end, plan.resume_at, queue,
                                                        first.spare if i == 0 else None))
                   for i, (start, end, queue) in enumerate(zip(starts, plan.cuts, queues))]
        if not plan.cuts and first.spare is not None:
            first.spare.close()  # one piece: the plan's own channel has it
        readers.append(asyncio.create_task(
            _drain(first.process, starts[-1], plan.resume_at, queues[-1])))
        rest = None if follow else asyncio.create_task(self._read_to_end(plan.resume_at))
        try:
            async for batch in in_order(queues):
                yield Lines(batch, plan.resume_at)
            for reader in readers:
                reader.result()  # a piece that failed fails the backfill
            if rest is not None and (data := await rest):
                yield Data(plan.resume_at, data)
        except (OSError, asyncssh.Error) as error:
            raise SourceError(f"{self.target.host}: connection lost: {error}") from None
        finally:
            for task in [*readers, *([rest] if rest else [])]:
                task.cancel()
            await asyncio.gather(*readers, *([rest] if rest else []), return_exceptions=True)

    async def _grep_piece(self, start: int, end: int, resume_at: int, queue: asyncio.Queue,
                          waiting=None) -> None:
        """Grep ``[start, end)`` on a new channel, or on ``waiting`` (``grep_piece_when_told``)."""
        try:
            if waiting is not None:
                waiting.stdin.write(b"%d %d\n" % (start, end))
                waiting.stdin.write_eof()
                process = waiting
            else:
                process = await self._open(
                    remote_commands.grep_piece(self.path, self.prefilter, start, end))
        except BaseException:
            queue.put_nowait(None)  # the pieces after it are not waited for in vain
            raise
        await _drain(process, start, resume_at, queue)

    async def _read_from(self, offset: int, follow: bool) -> AsyncIterator[SourceEvent]:
        import asyncssh

        if not follow:
            if rest := await self._read_to_end(offset):
                yield Data(offset, rest)
            return
        try:
            process = await self._conn.create_process(remote_commands.follow(self.path, offset),
                                                      encoding=None)
        except (OSError, asyncssh.Error) as error:
            raise _Dropped(str(error)) from None
        errors: asyncio.Future = asyncio.create_task(process.stderr.readline())
        data_task: asyncio.Future | None = None
        caught_up = False
        try:
            while True:
                data_task = asyncio.create_task(process.stdout.read(_CHUNK))
                while True:
                    done, _ = await asyncio.wait({data_task, errors}, timeout=0.3,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    if errors in done:
                        message = errors.result().decode(errors="replace")
                        # stderr at EOF: wait on nothing rather than spin on empty reads.
                        errors = (asyncio.create_task(process.stderr.readline()) if message
                                  else asyncio.get_running_loop().create_future())
                        if _RESTARTED in message or "replaced" in message:
                            yield Reset(f"{self.label} was truncated or replaced; reading it again "
                                        "from the start")
                            offset = 0
                    if data_task in done:
                        break
                    if not done and not caught_up:
                        caught_up = True
                        yield CaughtUp()
                data = data_task.result()
                if not data:
                    raise _Dropped("the remote tail ended")
                caught_up = False
                yield Data(offset, data)
                offset += len(data)
        except (OSError, asyncssh.Error) as error:
            raise _Dropped(str(error)) from None
        finally:
            for task in (errors, data_task):
                if task is not None:
                    task.cancel()
                    # A read the connection's loss ended is answered here, not logged as lost.
                    task.add_done_callback(lambda done: done.cancelled() or done.exception())
            process.close()

    async def read_range(self, start: int, end: int) -> bytes:
        if end <= start:
            return b""
        return await self.run(remote_commands.read_range(self.path, start, end), binary=True)

    async def _read_to_end(self, start: int) -> bytes:
        return await self.run(remote_commands.read_range(self.path, start, None), binary=True)

    async def close(self) -> None:
        self._drop_first_piece()
        if not self._owns_connection:  # the other source closes it; a reconnect makes our own
            self._conn, self._owns_connection = None, True
        if self._conn is not None:
            self._conn.close()
            try:
                await self._conn.wait_closed()
            except Exception:  # noqa: BLE001 - a connection already dead closes as it can
                pass
            self._conn = None


async def _drain(process, base: int, resume_at: int, queue: asyncio.Queue) -> None:
    """``drain`` a remote piece's grep output, then close its channel."""
    try:
        await drain(process.stdout, base, resume_at, queue)
    finally:
        process.close()


@dataclass(frozen=True, slots=True)
class _Plan:
    """A backfill plan from the box: where the follower starts, where the pieces meet."""

    resume_at: int
    cuts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _FirstPiece:
    """The plan, the channel that goes on with the last piece's grep output, and a
    channel waiting for the bounds of the first piece (``grep_piece_when_told``)."""

    plan: _Plan
    process: object
    spare: object | None = None

    def close(self) -> None:
        for process in (self.process, self.spare):
            if process is not None:
                process.close()

    @classmethod
    async def read(cls, process, label: str, spare=None) -> _FirstPiece:
        """Read the ``RESUME <n>`` and ``CUTS <n>...`` lines that start ``process``'s output."""
        resume = (await process.stdout.readline()).split()
        cuts = (await process.stdout.readline()).split()
        if (resume[:1] != [b"RESUME"] or len(resume) != 2 or not resume[1].isdigit()
                or cuts[:1] != [b"CUTS"] or not all(cut.isdigit() for cut in cuts[1:])):
            for channel in (process, spare):
                if channel is not None:
                    channel.close()
            raise SourceError(f"{label}: cannot read the file (it vanished, or the box lacks "
                              "GNU coreutils)")
        return cls(_Plan(int(resume[1]), tuple(int(cut) for cut in cuts[1:])), process, spare)


class _Dropped(Exception):
    """The connection or the remote follower went away."""

