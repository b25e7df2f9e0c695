"""A run's log on another machine, as a LogSource.

Backfill without copying the log: ``grep -b`` runs on the box over the bytes
present when we looked and sends back only the lines the scanner wants, with
their offsets. Then ``tail -F`` streams new bytes from there. The connection
is shared by every command; when it drops, the source says so, reconnects
with backoff and resumes from the last byte it delivered, so nothing is lost
or read twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from tui.sources.base import CaughtUp, Data, Lines, Reset, SourceError, SourceEvent, Status
from tui.sources.grep_filter import GrepOutput
from tui.sources.ssh import remote_commands
from tui.sources.ssh.target import RemoteTarget

_CHUNK = 1 << 20
_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
# What GNU tail -F says on stderr when the file shrank under it.
_RESTARTED = "file truncated"


class RemoteLog:
    """A log file (or a run directory's log) on ``target``'s host."""

    def __init__(self, target: RemoteTarget, prefilter: Sequence[bytes] = (),
                 accept_new_host_key: bool = False) -> None:
        self.target = target
        self.prefilter = tuple(prefilter)
        self.accept_new_host_key = accept_new_host_key
        self.path = target.path
        self._conn = None

    @property
    def connection(self):
        """The open asyncssh connection (shared with the accelerator pollers)."""
        return self._conn

    @property
    def label(self) -> str:
        return f"{self.target.host}:{self.path}"

    async def connect(self) -> str | None:
        """Connect, and find the log when the target is a run directory (one round trip)."""
        from tui.sources.ssh.connection import connect

        self._conn = await connect(self.target, self.accept_new_host_key)
        out = await self._run(remote_commands.discover(self.target.path))
        head, _, rest = out.partition("\n")
        if head == "MISSING":
            raise SourceError(f"{self.label}: no such file or directory on {self.target.host}")
        if head == "DENIED":
            raise SourceError(f"{self.label}: permission denied")
        if head.startswith("FILE"):
            return None
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
        why = "with verl step lines" if with_steps else "none has step lines yet"
        return f"watching {self.label} (newest of {len(candidates)} log file(s) {why})"

    def use_log(self, log: str) -> None:
        """``--log``: a file inside the run directory (or an absolute path) instead of discovery."""
        self.path = log if log.startswith("/") else f"{self.target.path.rstrip('/')}/{log}"

    async def _run(self, command: str, binary: bool = False):
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
            async for event in self._backfill():
                yield event
                offset = event.resume_at
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

    async def _backfill(self) -> AsyncIterator[Lines]:
        process = await self._conn.create_process(
            remote_commands.backfill(self.path, self.prefilter), encoding=None)
        output = GrepOutput()
        resume_at: int | None = None
        batch: list[tuple[int, bytes]] = []
        try:
            header = await process.stdout.readline()
            if not header.startswith(b"RESUME ") or not header[7:].strip().isdigit():
                raise SourceError(f"{self.label}: cannot read the file")
            resume_at = int(header[7:])
            while chunk := await process.stdout.read(_CHUNK):
                batch += [(o, line) for o, line in output.feed(chunk) if o < resume_at]
                if len(batch) > 2000:
                    yield Lines(batch, resume_at)
                    batch = []
        finally:
            process.close()
        yield Lines(batch, resume_at)

    async def _read_from(self, offset: int, follow: bool) -> AsyncIterator[SourceEvent]:
        import asyncssh

        if not follow:
            size = int((await self._run(remote_commands.size(self.path))).strip() or 0)
            if size > offset:
                yield Data(offset, await self.read_range(offset, size))
            return
        try:
            process = await self._conn.create_process(remote_commands.follow(self.path, offset),
                                                      encoding=None)
        except (OSError, asyncssh.Error) as error:
            raise _Dropped(str(error)) from None
        errors: asyncio.Future = asyncio.create_task(process.stderr.readline())
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
            errors.cancel()
            process.close()

    async def read_range(self, start: int, end: int) -> bytes:
        if end <= start:
            return b""
        return await self._run(remote_commands.read_range(self.path, start, end), binary=True)

    async def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            try:
                await self._conn.wait_closed()
            except Exception:  # noqa: BLE001 - a connection already dead closes as it can
                pass
            self._conn = None


class _Dropped(Exception):
    """The connection or the remote follower went away."""

