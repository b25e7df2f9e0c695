"""A run's log on another machine, as a LogSource.

Backfill without copying the log: ``grep -b`` runs on the box over the bytes
present when we looked, in several pieces at once (one per CPU there), and
sends back only the lines the scanner wants, with their offsets, all in one
channel (``remote_commands.backfill``). Then ``tail -F`` streams new bytes
from there, in the same channel. Opening a run costs one channel, whose
script also finds the log in a run directory and answers the questions the
session asks next (the log's logger hints, the box's accelerator tools): each
channel costs the box an sshd session and a login shell, whose start-up files
(conda, pyenv, modules) can take longer than the whole backfill of a small log.
The connection is shared by every command; when it drops, the source says so, reconnects
with backoff and resumes from the last byte it delivered, so nothing is lost
or read twice. Each of those commands also says when the box last wrote the
log, on this machine's clock (``box_clock``), and the events carry it: bytes
that arrive now may have been written hours ago.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any
from dataclasses import dataclass, replace

import asyncssh

from tui.parsers.run_config import CONFIG_HEAD_BYTES
from tui.parsers.text import safe_text
from tui.sources.accelerators.hosts import AcceleratorHost
from tui.sources.base import (
    CaughtUp,
    Data,
    Lines,
    Reset,
    SourceError,
    SourceEvent,
    Status,
)
from tui.sources import follow_identity
from tui.sources.discovery import NoLogFound
from tui.sources.grep_filter import GrepOutput
from tui.sources.ssh import box_shell, remote_commands, why_unreadable
from tui.sources.ssh.answers import Answers
from tui.sources.ssh.box_clock import BoxClock
from tui.sources.ssh.box_shell import Process
from tui.sources.ssh.pool import ConnectionPool, Seat
from tui.sources.ssh.remote_identity import RemoteIdentity, parse_from
from tui.sources.ssh.ssh_runner import SshRunner
from tui.sources.ssh.target import RemoteTarget

_CHUNK = 1 << 20
# A follower whose log's size is unknown, or which has caught up once, is caught up again
# when no byte has come for this long (a burst of new lines is not settled halfway).
_QUIET_S = 0.3
# What GNU tail -F says on stderr (in the C locale) when the file it follows changed.
_TAIL_NOTICES = ("file truncated", "has been replaced", "has appeared")


class RemoteLog:
    """A log file (or a run directory's log) on ``target``'s host."""

    def __init__(self, target: RemoteTarget, prefilter: Sequence[bytes] = (),
                 accept_new_host_key: bool = False, piece_bytes: int = 64 << 20,
                 run_dir: str | None = None, pool: ConnectionPool | None = None) -> None:
        """``run_dir``: the run directory the log belongs to, when the user named it
        (``--log``); a directory target sets it in ``connect``. ``pool``: the fleet's
        shared connections, which this log then uses instead of a login of its own."""
        self.target = target
        self.prefilter = tuple(prefilter)
        self.accept_new_host_key = accept_new_host_key
        # The smallest piece worth its own grep; a test makes it small to see the cuts.
        self.piece_bytes = piece_bytes
        self.path = target.path
        self.run_dir = run_dir
        self._conn: asyncssh.SSHClientConnection | None = None
        self._owns_connection = pool is None
        self._pool = pool
        self._seat: Seat | None = None  # this log's place in the pool, taken at the first login
        # The backfill connect() started, its plan read.
        self._first: _Backfill | None = None
        # The backfill's channel, following the log once the backfill is read (stream()).
        self._handoff: _Handoff | None = None
        # What the opening channel was asked besides its backfill, by the text of each question.
        self._answers = Answers()
        # How long the log's head the opening brought must be to have come whole: the
        # first CONFIG_HEAD_BYTES, or the whole log where it was shorter then.
        self._head_length: int | None = None
        # A backfill's channel read to its end by a reader that does not follow (check), left
        # open until the opening's answers on its stderr have come (``_close_after_answers``).
        self._answering: Process | None = None
        self._answered: asyncio.Task[None] | None = None  # held: the loop holds tasks weakly
        # Whether the user was told the box cannot say when the log was written.
        self._clock_noted = False
        # A run with no console log: its JSONL / event files (tui.sources.ssh.remote_logger_run),
        # set by connect(); then there are no console bytes to stream.
        self.logger_files = None
        self._chosen: tuple[bool, int, str] | None = None  # the log discovery chose
        # Which file the bytes delivered so far came from (remote_identity), checked again by
        # each follower and backfill that resumes them.
        self._identity: RemoteIdentity | None = None
        # Whether tail said the log changed: the next follower reads it from 0, saying how.
        self._changed = False

    @classmethod
    def sharing(cls, other: RemoteLog, path: str) -> RemoteLog:
        """Another file of the same host, read over ``other``'s open connection."""
        source = cls(replace(other.target, path=path), accept_new_host_key=other.accept_new_host_key)
        source._conn, source._owns_connection = other.connection, False
        source._pool, source._seat = other._pool, other._seat
        return source

    @property
    def connection(self) -> asyncssh.SSHClientConnection:
        """The open asyncssh connection (shared with the accelerator pollers); SourceError
        between a drop and the reconnect."""
        if self._conn is None:
            raise SourceError(f"{self.target.host}: not connected")
        return self._conn

    @property
    def label(self) -> str:
        return f"{self.target.host}:{self.path}"

    @property
    def file_path(self) -> str:
        """The log's path on the box (relative ones from the login's home, where commands run)."""
        return self.path

    async def connect(self) -> str | None:
        """Connect, and find the log when the target is a run directory (one round trip).

        For a log file, the same round trip runs the whole backfill, which
        ``stream`` then reads.
        """
        from tui.sources.ssh import remote_logger_run

        await self.open()
        try:
            note = await self._discover()
            if self._chosen is None:  # a file: a JSONL or event file named is that run
                if await remote_logger_run.named_logger_file(self):
                    self._drop_first_backfill()
            else:  # a directory's log with no step line may not be the run's console
                note = await remote_logger_run.instead_of_log(self, self._chosen) or note
            return note
        except NoLogFound:
            return await remote_logger_run.find_logger_run(self, self.target.path)
        except (_Dropped, OSError, asyncssh.Error) as error:
            raise SourceError(f"{self.target.host}: connection lost: {error}") from None

    async def open(self) -> None:
        """Connect to the host, reading nothing yet (``connect`` does, and opens first).

        A source that learns the log's path on the host itself (a Slurm job's output
        file, from ``scontrol`` on the login node) opens, runs its commands, ``aim``s
        and then connects, all over this one connection. A connection that closed
        since (an attempt that failed half-way, retried) is made again."""
        if self._conn is None or self._conn.is_closed():
            self._conn = await self._login(self._conn)

    async def _login(self, dropped: asyncssh.SSHClientConnection | None
                     ) -> asyncssh.SSHClientConnection:
        """A connection to the box: a login of its own, or the pool's for this host (in place
        of ``dropped``, made once for every run that shares it)."""
        if self._pool is None:
            from tui.sources.ssh.connection import connect

            return await connect(self.target, self.accept_new_host_key)
        if self._seat is None:
            self._seat = self._pool.seat(self.target)
        return await self._pool.replace(self._seat, dropped)

    def aim(self, path: str) -> None:
        """Read ``path`` on the same host instead of the target's (before ``connect``)."""
        self.target = replace(self.target, path=path)
        self.path = path

    async def _discover(self) -> str | None:
        asks = self._asks()
        process = await self._open(remote_commands.discover(
            self.target.path, self.prefilter, self.piece_bytes, [ask for ask, _ in asks]))
        handed_on = False
        try:
            head = (await process.stdout.readline()).strip()
            if head == b"FILE":
                if self.prefilter:
                    self._first, handed_on = await self._read_first(process, asks), True
                    return self._clock_note(self._first.plan.clock)
                return None
            if head == b"MISSING":  # or behind a file, or a directory we may not enter
                why = await self.run(why_unreadable.why_command(self.target.path))
                raise SourceError(f"{self.label}: {why_unreadable.reason(why)} on {self.target.host}")
            if head != b"DIR":
                rest = b""
            else:
                try:
                    rest = await process.stdout.readuntil(b"\0CHOOSE\0")
                except asyncio.IncompleteReadError:
                    raise _Dropped("the box's listing of the run directory was cut short") from None
            said = self._choose(head, rest.decode("utf-8", "replace"))
            chosen = self._chosen
            if self.prefilter and chosen is not None and chosen[0] and "\n" not in chosen[2]:
                # The box backfills the chosen log in this channel (a name with a newline
                # cannot be sent as one line: its backfill gets a channel of its own).
                chosen_path = remote_commands.operand(chosen[2])
                process.stdin.write(chosen_path.encode("utf-8", "surrogateescape") + b"\n")
                self._first, handed_on = await self._read_first(process, asks), True
            else:
                process.stdin.write(b"\n")
            return said
        finally:
            if not handed_on:
                process.close()

    def _choose(self, head: bytes, listing: str) -> str:
        """Take the log of a directory's listing (``discover``'s ``DIR`` records): the newest
        with verl step lines, else the newest; the line saying which."""
        if head == b"DENIED":
            raise SourceError(f"{self.label}: permission denied")
        if head != b"DIR":
            raise SourceError(f"{self.label}: the box gave an answer rlwatch does not know "
                              f"({safe_text(head[:40].decode('utf-8', 'replace'))!r})")
        candidates = []
        for line in listing.split("\0"):
            mtime, has_steps, path = (line.split(" ", 2) + ["", ""])[:3]
            if path and (mtime.isdigit() or mtime == "-"):  # "-": the box cannot say
                candidates.append((has_steps == "1", int(mtime) if mtime != "-" else 0, path))
        if not candidates:
            raise NoLogFound(f"{self.label}: no *.log, *.out or *.txt file found; pass --log FILE")
        with_steps = [c for c in candidates if c[0]]
        chosen = self._chosen = max(with_steps or candidates, key=lambda c: c[1])
        self.path = chosen[2]
        self.run_dir = self.target.path
        why = "with verl step lines" if with_steps else "none has step lines yet"
        said = f"watching {self.label} (newest of {len(candidates)} log file(s) {why})"
        if chosen[1] == 0 and (note := self._clock_note(BoxClock(None, None, True))):
            said += f"; {note}"  # no mtime on this box: said now, where check prints it
        return said

    def _asks(self) -> list[tuple[str, Callable[[], str]]]:
        """What the opening channel asks beside the backfill, each with the text the question
        would have as a command of its own once the log is known (the key of its answer):
        the log's head where a run prints its config (read by a session once the log is
        read, for a run that has not finished: ``read_range``), the lines of the log that
        name its logger files, and which accelerator tools the box has (nvidia-smi…).

        The head is asked of every run opened, finished or not: whether a run has finished
        is known only once its lines are parsed here, and asking then would cost the second
        box session (a login shell) this saves. It is at most CONFIG_HEAD_BYTES (a run's
        config is printed in its first tens of kilobytes), sent compressed, read on the box
        beside the grep pieces, and kept here only until the session takes it or closes."""
        from tui.parsers.verl_loggers import HINT_NEEDLES
        from tui.sources.accelerators.detect import pollers_for, probe_argv
        from tui.sources.ssh.ssh_runner import remote_command

        runner = SshRunner(lambda: self.connection, self.target.host)
        probe = remote_command(probe_argv([poller.tool for poller in pollers_for(runner, False)]))
        return [(remote_commands.head_as_stamped('"$f"', CONFIG_HEAD_BYTES),
                 lambda: remote_commands.read_range(self.path, 0, CONFIG_HEAD_BYTES)),
                (remote_commands.hint_lines_of('"$f"', HINT_NEEDLES),
                 lambda: remote_commands.hint_lines(self.path, HINT_NEEDLES)),
                (probe, lambda: probe)]

    async def _read_first(self, process: Process, asks: list[tuple[str, Callable[[], str]]]
                          ) -> _Backfill:
        """The opening backfill, its plan read (stream() reads on), and its answers read as
        they come."""
        first = await _Backfill.read(process, self.label)
        self._answers.expect([key() for _, key in asks], process.stderr)
        if first.plan.clock is not None and first.plan.clock.size is not None:
            self._head_length = min(CONFIG_HEAD_BYTES, first.plan.clock.size)
        return first

    def _clock_note(self, clock: BoxClock | None) -> str | None:
        """The note for a box that cannot say when the log was written, the first time only."""
        note = None if clock is None else clock.note(self.target.host, self.path)
        if note is None or self._clock_noted:
            return None
        self._clock_noted = True
        return note

    async def _open(self, command: str) -> Process:
        """A remote process for ``command`` (bytes out), or ``_Dropped`` when the connection fails."""
        try:
            return await box_shell.start(self.connection, command, self.target.host)
        except (OSError, asyncssh.Error) as error:
            raise _Dropped(str(error)) from None

    def _drop_first_backfill(self) -> None:
        if self._first is not None:
            self._first.process.close()
            self._first = None

    async def run(self, command: str, binary: bool = False) -> Any:
        """``command``'s output on the box (text, or bytes with ``binary``); a command the
        opening channel asked already is answered from there, once."""
        if (known := await self._answers.take(command)) is not None:
            return known[1] if binary else known[1].decode("utf-8", "replace")
        if self._conn is None:  # between a drop and the reconnect another task is making
            raise SourceError(f"{self.target.host}: not connected")
        try:
            output = (await box_shell.run(self._conn, command, self.target.host)).stdout
        except (OSError, asyncssh.Error) as error:
            raise SourceError(f"{self.target.host}: connection lost: {error}") from None
        return output if binary else output.decode("utf-8", "replace")

    async def stream(self, start: int, follow: bool) -> AsyncIterator[SourceEvent]:
        """Backfill through grep on the box (from 0), then follow; reconnect when dropped.

        A drop mid-backfill resumes the backfill after the last line delivered,
        so each line is delivered once however often the connection goes.
        A run with no console log streams nothing (its logger feeds bring the steps);
        followed, it keeps their connection up instead, reconnecting when it drops.
        """
        if self.logger_files is not None:
            while follow:
                await self.connection.wait_closed()
                async for status in self._reconnect("the connection closed"):
                    yield status
            return
        offset = start
        if start == 0 and self.prefilter:
            delivered = 0  # where the lines delivered so far end
            while True:
                restart = False
                try:
                    async for event in self._backfill(follow, delivered):
                        yield event
                        if isinstance(event, Reset):  # another file: its backfill from 0
                            restart, delivered = True, 0
                        elif isinstance(event, Lines):
                            offset = event.resume_at
                            if event.lines:
                                last, line = event.lines[-1]
                                delivered = last + len(line)
                        elif isinstance(event, Data):  # the line still being written: the
                            offset = event.offset + len(event.data)  # follower reads on from its end
                    if not restart:
                        break
                except _Dropped as dropped:
                    if not follow:
                        raise SourceError(f"{self.target.host}: connection lost: {dropped}") from None
                    async for status in self._reconnect(str(dropped)):
                        yield status
            if not follow:
                return
        self._drop_first_backfill()
        while True:
            try:
                async for read in self._read_from(offset, follow):
                    if isinstance(read, Data):
                        offset = read.offset + len(read.data)
                    elif isinstance(read, Reset):
                        offset = 0
                    yield read
                if not follow:
                    return
                # A follower returns after tail's notice of a change: another reads it anew.
            except _Dropped as dropped:
                if not follow:
                    raise SourceError(f"{self.target.host}: connection lost: {dropped}") from None
                async for status in self._reconnect(str(dropped)):
                    yield status

    async def _reconnect(self, reason: str) -> AsyncIterator[Status]:
        """Say the connection is lost, then try again: at once, then after pauses that grow
        to a cap (``connection.reconnect_delay``), until it is back. Each status says which
        attempt is next and when."""
        from tui.sources.ssh.connection import Refused, reconnect_delay

        dropped = self._conn
        said = f"connection lost ({reason})"
        refused = False
        for attempt in itertools.count(1):
            delay = reconnect_delay(attempt - 1, refused)
            when = f", next in {delay:g}s" if delay else ""
            # What is happening first: the header cuts a long status at its width.
            yield Status(f"reconnecting to {self.target.host} (attempt {attempt}{when}): {said}", ok=False)
            await asyncio.sleep(delay)
            await self.close()
            try:
                self._conn = await self._login(dropped)
            except SourceError as error:
                said, refused = f"still no connection ({error})", isinstance(error, Refused)
                continue
            yield Status(f"reconnected to {self.target.host}; resuming where it stopped")
            return

    async def _backfill(self, follow: bool, start: int = 0
                        ) -> AsyncIterator[Lines | Data | Status | Reset]:
        """Lines of ``[start, RESUME)`` matching the prefilter, in order, as the box's
        pieces send them (always at least one event, to say where RESUME is);
        then the bytes from RESUME to the end seen then. With ``follow``, the channel
        is handed on to the follower (``_handoff``), whose tail starts where they end.

        A connection lost on the way raises ``_Dropped``.
        """
        backfill, self._first = self._first, None  # connect()'s, for a backfill from 0
        try:
            if backfill is None:
                seen = self._identity if start else None
                backfill = await _Backfill.read(await self._open(remote_commands.backfill(
                    self.path, self.prefilter, self.piece_bytes, start,
                    head_bytes=seen.head_bytes if seen is not None else None)), self.label)
                now = backfill.plan.identity
                change = None if seen is None or now is None else (
                    seen.same_file(now)
                    or ("truncated" if backfill.plan.resume_at < start else None))
                if change is not None:
                    self._identity = None
                    yield self._reset(change)
                    return
            self._identity = backfill.plan.identity
            resume_at, clock = backfill.plan.resume_at, backfill.plan.clock
            if note := self._clock_note(clock):
                yield Status(note, ok=False)
            # The lines end at RESUME, no further than the size the box stamped.
            written = clock.mtime_for(resume_at) if clock is not None else None
            output = PiecesOutput([start, *backfill.plan.cuts])
            said = False
            while not output.ended:
                chunk = await backfill.process.stdout.read(_CHUNK)
                if not chunk:
                    raise _Dropped("the backfill on the box ended before its last piece")
                if lines := [(offset, line) for offset, line in output.feed(chunk) if offset < resume_at]:
                    said = True
                    yield Lines(lines, resume_at, written)
            if not said:
                yield Lines([], resume_at, written)
            if follow:
                handoff = await _Handoff.after_rest(backfill.process, output.unsplit, resume_at)
                if handoff is None:  # the log changed under the backfill: a follower of its own
                    return
                rest, self._handoff, backfill = handoff.rest, handoff, None
            else:
                rest = await _read_rest(backfill.process, output.unsplit)
            if rest:
                end = resume_at + len(rest)
                yield Data(resume_at, rest, clock.mtime_for(end) if clock is not None else None)
        except (OSError, asyncssh.Error) as error:
            raise _Dropped(str(error)) from None
        finally:
            if backfill is not None:
                self._close_after_answers(backfill.process)

    def _close_after_answers(self, process: Process) -> None:
        """Close a backfill's channel once the opening's answers have all come on its stderr
        (at once where none is awaited): a small log's pieces end before its head, logger
        hints and accelerator probe are answered, and closing the channel then would make
        each of them a login of its own. Its follower waits on the channel meanwhile; ``close``
        ends it if the answers have not come by then."""
        async def after_answers() -> None:
            try:
                await self._answers.read()
            finally:
                process.close()
                if self._answering is process:
                    self._answering = None

        self._answering = process
        self._answered = asyncio.get_running_loop().create_task(after_answers())

    async def _read_from(self, offset: int, follow: bool) -> AsyncIterator[SourceEvent]:
        if not follow:
            output = await self.run(remote_commands.read_from(self.path, offset), binary=True)
            head, _, rest = output.partition(b"\n")
            clock = BoxClock.parse(head, time.time())
            if note := self._clock_note(clock):
                yield Status(note, ok=False)
            if rest:
                yield Data(offset, rest, clock.mtime_for(offset + len(rest)) if clock else None)
            return
        handoff, self._handoff = self._handoff, None
        if handoff is not None and handoff.offset != offset:
            handoff.process.close()
            handoff = None
        if handoff is None:
            seen = self._identity.args() if self._identity is not None and offset else None
            process = await self._open(remote_commands.follow(self.path, offset, seen, self._changed))
        else:
            process = handoff.process
        # The backfill's channel: its stderr carries the opening's answers first.
        errors: asyncio.Future = asyncio.create_task(
            self._stderr_after_answers(process) if handoff is not None
            else process.stderr.readline())
        data_task: asyncio.Future | None = None
        caught_up = ever_caught_up = False
        try:
            # Printed before tail starts: the bytes below its size were written by its mtime.
            clock = (handoff.clock if handoff is not None
                     else BoxClock.parse(await process.stdout.readline(), time.time()))
            if note := self._clock_note(clock):
                yield Status(note, ok=False)
            if handoff is None:  # where the box started tail, and which file it follows
                began = parse_from(await process.stdout.readline())
                self._identity = RemoteIdentity.parse(await process.stdout.readline())
                self._changed = False
                if began is None:
                    raise _Dropped("the follower on the box did not start")
                if began[1] is not None:
                    yield self._reset(began[1])
                    offset = 0
            if handoff is not None and handoff.pending:  # read with the backfill's last bytes
                end = offset + len(handoff.pending)
                yield Data(offset, handoff.pending, handoff.clock.mtime_for(end))
                offset = end
            while True:
                data_task = asyncio.create_task(process.stdout.read(_CHUNK))
                while True:
                    # Every byte the log held when tail started has come: caught up the
                    # first time at once, not after the quiet moment (below) that keeps a
                    # burst of new lines from being settled halfway. A fleet's rows and a
                    # crash's exception line wait on this.
                    if not ever_caught_up and clock is not None and clock.size is not None \
                            and offset >= clock.size:
                        caught_up = ever_caught_up = True
                        yield CaughtUp()
                    done, _ = await asyncio.wait({data_task, errors}, timeout=_QUIET_S,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    if errors in done:
                        message = errors.result().decode(errors="replace")
                        # stderr at EOF: wait on nothing rather than spin on empty reads.
                        errors = (asyncio.create_task(process.stderr.readline()) if message
                                  else asyncio.get_running_loop().create_future())
                        if _tail_notice(message):
                            # The bytes tail sent before its notice may be the new file's: a
                            # follower of its own reads it from the start, once the box has
                            # said whether it is another file or the same one rewritten.
                            self._changed = True
                            return
                    if data_task in done:
                        break
                    # Caught up: quiet for a moment, and every byte the log held when
                    # tail started has come. A busy box can be slow to start tail, and
                    # quiet then means late, not done.
                    if not done and not caught_up and (clock is None or clock.size is None
                                                       or offset >= clock.size):
                        caught_up = ever_caught_up = True
                        yield CaughtUp()
                data = data_task.result()
                if not data:
                    raise _Dropped("the remote tail ended")
                caught_up = False
                end = offset + len(data)
                yield Data(offset, data, clock.mtime_for(end) if clock is not None else None)
                offset = end
        except (OSError, asyncssh.Error) as error:
            raise _Dropped(str(error)) from None
        finally:
            for task in (errors, data_task):
                if task is not None:
                    task.cancel()
                    # A read the connection's loss ended is answered here, not logged as lost.
                    task.add_done_callback(lambda done: done.cancelled() or done.exception())
            process.close()

    async def _stderr_after_answers(self, process: Process) -> bytes:
        """The backfill channel's next line on stderr once the opening's answers have all come
        (not before: cancelled meanwhile, it reads nothing). A notice of tail's that came among
        the answers (the log truncated just as tail started, a question answered slowly) is
        that line: the answers' reader keeps it, and it was lost there before."""
        await self._answers.read()
        for line in self._answers.others():
            if _tail_notice(line.decode(errors="replace")):
                return line
        return await process.stderr.readline()

    def _reset(self, change: str) -> Reset:
        """The notice for a log that ``change`` (``"replaced"``, ``"truncated"``), worded as
        for a local log."""
        return Reset(follow_identity.replaced(self.label) if change == "replaced"
                     else follow_identity.truncated(self.label))

    async def read_range(self, start: int, end: int) -> bytes:
        """The bytes ``[start, end)``: the log's config head as the opening brought it (once),
        any other range, or that one again, read on the box."""
        if end <= start:
            return b""
        command = remote_commands.read_range(self.path, start, end)
        if (start, end) == (0, CONFIG_HEAD_BYTES) and (head := await self._opening_head(command)) is not None:
            return head
        return await self.run(command, binary=True)

    async def _opening_head(self, command: str) -> bytes | None:
        """The log's head the opening channel brought (``_asks``), taken once; None where it
        did not come whole: the box's shell drops NUL bytes from an answer, and a log cut
        since it was stamped is shorter. The box is asked by range then."""
        answer = await self._answers.take(command)
        if answer is None or answer[0] != 0 or len(answer[1]) != self._head_length:
            return None
        return answer[1]


    async def close(self) -> None:
        self._drop_first_backfill()
        if self._answering is not None:
            self._answering.close()
            self._answering = None
        if self._handoff is not None:
            self._handoff.process.close()
            self._handoff = None
        self._answers.close()
        if not self._owns_connection:  # its owner (a source, the pool) closes it; a reconnect
            # makes our own, or asks the pool again
            self._conn, self._owns_connection = None, self._pool is None
        if self._conn is not None:
            self._conn.close()
            try:
                await self._conn.wait_closed()
            except Exception:  # noqa: BLE001 - a connection already dead closes as it can
                pass
            self._conn = None

    def accelerator_host(self) -> AcceleratorHost:
        """The box itself, over this log's connection (one login serves both)."""
        return AcceleratorHost(SshRunner(lambda: self.connection, self.target.host, self._answers.take),
                               self.target.host, False)


def _tail_notice(message: str) -> bool:
    """Whether a line of ``tail -F``'s stderr says the file it follows changed."""
    return any(notice in message for notice in _TAIL_NOTICES)


async def _rest_section(process: Process, start: bytes) -> tuple[bytes, int, bytes]:
    """The ``REST <n>`` section after a backfill's pieces (``start``: its bytes read so far):
    up to n bytes, n, and the bytes read past them (the follower's ``CLOCK`` line, say)."""
    rest = start
    while b"\n" not in rest and (chunk := await process.stdout.read(_CHUNK)):
        rest += chunk
    header, _, rest = rest.partition(b"\n")
    if header[:5] != b"REST " or not header[5:].isdigit():
        raise _Dropped("the backfill on the box ended before the end of the log")
    size = int(header[5:])
    while len(rest) < size and (chunk := await process.stdout.read(size - len(rest))):
        rest += chunk
    return rest[:size], size, rest[size:]


async def _read_rest(process: Process, start: bytes) -> bytes:
    """The bytes of the ``REST <n>`` section, for a reader that does not follow."""
    rest, size, _ = await _rest_section(process, start)
    if len(rest) < size:  # the log shrank meanwhile (the script still ends well), or we were cut off
        await process.wait_closed()
        if process.returncode != 0:
            raise _Dropped("the backfill on the box ended before the end of the log")
    return rest


@dataclass(frozen=True, slots=True)
class _Handoff:
    """A backfill's channel, now following the log: its REST bytes, where its tail starts
    (``offset``), the ``CLOCK`` line printed before the tail started, and the tail's bytes
    read with those (``pending``)."""

    process: Process
    rest: bytes
    offset: int
    clock: BoxClock
    pending: bytes

    @classmethod
    async def after_rest(cls, process: Process, start: bytes, resume_at: int) -> _Handoff | None:
        """Read the REST section and the CLOCK line after it; None (the channel closed) when
        they do not fit together: the log shrank or was replaced while the backfill ran, so
        the REST bytes may not be what they say, and a follower of its own reads from RESUME."""
        rest, size, after = await _rest_section(process, start)
        while b"\n" not in after and (chunk := await process.stdout.read(_CHUNK)):
            after += chunk
        line, _, pending = after.partition(b"\n")
        clock = BoxClock.parse(line, time.time())
        end = resume_at + size
        if len(rest) < size or clock is None or clock.size is None or clock.size < end:
            process.close()
            return None
        return cls(process, rest, end, clock, pending)


@dataclass(frozen=True, slots=True)
class _Plan:
    """A backfill plan from the box: where the follower starts, where the pieces meet,
    when the box last wrote the log (None: the box printed no ``CLOCK`` line), and which
    file it is."""

    resume_at: int
    cuts: tuple[int, ...]
    clock: BoxClock | None = None
    identity: RemoteIdentity | None = None  # which file it is (remote_identity)


@dataclass(frozen=True, slots=True)
class _Backfill:
    """A backfill under way on the box: its plan, and the channel its pieces come on."""

    plan: _Plan
    process: Process

    @classmethod
    async def read(cls, process: Process, label: str) -> _Backfill:
        """Read the ``CLOCK …``, ``IDENT …``, ``RESUME <n>`` and ``CUTS <n>...`` lines that start
        ``process``'s output (the first as soon as it comes: the box's time is compared with ours
        then)."""
        clock = BoxClock.parse(await process.stdout.readline(), time.time())
        identity = RemoteIdentity.parse(await process.stdout.readline())
        resume = (await process.stdout.readline()).split()
        cuts = (await process.stdout.readline()).split()
        if (clock is None or identity is None or resume[:1] != [b"RESUME"] or len(resume) != 2
                or not resume[1].isdigit() or cuts[:1] != [b"CUTS"]
                or not all(cut.isdigit() for cut in cuts[1:])):
            process.close()
            raise SourceError(f"{label}: cannot read the file (it vanished, or the box lacks "
                              "GNU coreutils)")
        return cls(_Plan(int(resume[1]), tuple(int(cut) for cut in cuts[1:]), clock, identity),
                   process)


class PiecesOutput(GrepOutput):
    """The backfill's output after its plan: each piece's ``grep -b`` lines (offsets from
    the piece's start) and then ``END <grep's status>``, piece after piece."""

    def __init__(self, starts: Sequence[int]) -> None:
        super().__init__(base=starts[0])
        self._next_starts = list(starts[1:])

    def other_line(self, line: bytes) -> None:
        # grep ends with status 0, or 1 when nothing matched; anything else (a
        # signal, a read error) cut the piece short.
        if line not in (b"END 0\n", b"END 1\n"):
            raise _Dropped("grep on the box stopped before the end of its piece")
        if self._next_starts:
            self.base = self._next_starts.pop(0)
        else:
            self.ended = True


class _Dropped(Exception):
    """The connection or the remote follower went away."""

