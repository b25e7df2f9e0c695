"""A Slurm job as a JobSource: its output file followed, its state polled, its nodes reachable.

Everything goes over one SSH connection to the login node, the one a
``RemoteLog`` opens for the job's output file: ``scontrol``/``sacct`` there say
where the job writes (``StdOut``, on the file system the login node shares
with the compute nodes), on which nodes it runs and in what state; the
``RemoteLog`` then backfills and follows that file as it would any remote log
(grep on the box, then tail), and the job's state is asked again every
``POLL_S`` while it runs, sent as ``JobState`` when it changes. The nodes are
reached through the login node as a jump host (``node_host``), the way the
cluster's users reach them. Nothing is written on the login node.

Where the controller no longer knows the job (``MinJobAge`` after it ended)
and accounting is off, Slurm has nothing left to say: the source says so and
names the output file to read instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import suppress
from dataclasses import replace
from typing import TYPE_CHECKING

from tui.parsers.jobs.slurm import (
    SlurmAnswerError,
    SlurmJob,
    accounting_off,
    first_line,
    forgotten,
    parse_sacct,
    parse_scontrol,
    parse_squeue,
    unknown_to_controller,
)
from tui.parsers.log_scanner import NEEDLES
from tui.parsers.records import JobOutcome, JobRecord
from tui.parsers.text import safe_text
from tui.sources.accelerators.hosts import AcceleratorHost, other_host
from tui.sources.base import JobState, SourceError, SourceEvent, Status
from tui.sources.run_files import LoggerFiles
from tui.sources.slurm import commands
from tui.sources.slurm.target import SlurmTarget

if TYPE_CHECKING:
    from tui.sources.ssh.remote_log import RemoteLog
    from tui.sources.ssh.pool import ConnectionPool

# How often a running job's state is asked again (one scontrol on the login node each).
POLL_S = 15.0
# Where the state was read, once Slurm can no longer be asked.
FORGOTTEN_NOTE = ("the state is scontrol's last word: the controller has forgotten the job and "
                  "accounting is off, so the output file alone tells how it went on")


class _Forgotten(SourceError):
    """The controller does not know the job and accounting is off: Slurm has nothing to say
    (``sacct_said``: sacct's own words for that)."""

    def __init__(self, message: str, sacct_said: str) -> None:
        super().__init__(message)
        self.sacct_said = sacct_said


class SlurmJobLog:
    """The job ``target`` names on its login node (``target.job_id`` None: ``connect`` lists
    the user's jobs there instead, as an error that names them)."""

    # The login node is only the way in: the job's accelerators are its nodes'.
    own_host_runs_job = False

    def __init__(self, target: SlurmTarget, accept_new_host_key: bool = False,
                 poll_s: float = POLL_S, pool: ConnectionPool | None = None) -> None:
        """``pool``: a fleet's shared SSH connections; the login node's is then shared with
        the fleet's other jobs and runs there."""
        from tui.sources.ssh.remote_log import RemoteLog  # asyncssh: loaded when a job is read

        self.target = target
        self.accept_new_host_key = accept_new_host_key
        self.poll_s = poll_s
        # The login node's connection, and the job's output file once Slurm names it.
        self.log = RemoteLog(target.login, NEEDLES, accept_new_host_key, pool=pool)
        self.job: SlurmJob | None = None
        self._log_open = False
        # False once Slurm has nothing left to say of the job (forgotten, accounting off).
        self._asking = True
        self._nodes: dict[str, AcceleratorHost] = {}

    @property
    def label(self) -> str:
        return self.log.label if self.job is not None else self.target.label

    @property
    def logger_files(self) -> LoggerFiles | None:
        return None  # the job's console is the run

    async def connect(self) -> str | None:
        """Ask Slurm for the job; open its output file unless it has not started yet."""
        await self.log.open()
        if self.target.job_id is None:
            raise SourceError(jobs_message(self.target, await list_jobs(self.log)))
        self.job = job = await self._ask()
        if job.stdout is None:
            raise SourceError(f"{self._name}: Slurm does not say where it writes its output")
        self.log.aim(job.stdout)
        record = job.record
        if record.outcome == JobOutcome.PENDING:
            return safe_text(f"{self._name} is {record.state}" + (f" ({record.message})" if record.message
                             else "") + f"; its output {self.log.label} is read when it starts")
        note = await self._open_log()
        ran = f" ({'ran' if record.ended else 'runs'} on {', '.join(record.nodes)})" if record.nodes else ""
        said = f"{self._name} {record.state}{ran}"
        return safe_text("; ".join(part for part in (f"{said}: watching {self.log.label}", note) if part))

    @property
    def _name(self) -> str:
        return f"Slurm job {self.target.job_id} on {self.target.login.host}"

    async def _open_log(self) -> str | None:
        """Connect the RemoteLog to the output file (its backfill starts on the box)."""
        assert self.job is not None
        try:
            note = await self.log.connect()
        except SourceError as error:
            guess = (" (sbatch's default file: this sacct is older than 23.02 and does not say "
                     "where the output went)") if self.job.guessed_stdout else ""
            raise SourceError(safe_text(f"{self._name} ({self.job.record.state}): {error}{guess}")) from None
        self._log_open = True
        return note

    async def _ask(self) -> SlurmJob:
        """Slurm's record of the job now: scontrol's, or sacct's once the controller forgot it."""
        assert self.target.job_id is not None
        answer = await self.log.run(commands.job_query(self.target.job_id))
        from_scontrol, marked, from_sacct = answer.partition(commands.SACCT_MARK)
        try:
            if not marked:
                return parse_scontrol(from_scontrol)
            return parse_sacct(from_sacct, self.target.job_id)
        except SlurmAnswerError:
            pass
        host = self.target.login.host
        if "command not found" in from_scontrol:
            raise SourceError(f"{host}: no scontrol there (is it a Slurm login node? Slurm's "
                              "commands must be on the PATH of a non-interactive shell)")
        scontrol_said = first_line(from_scontrol) or "nothing"
        sacct_said = first_line(from_sacct) or "nothing"
        if accounting_off(from_sacct) and unknown_to_controller(from_scontrol):
            raise _Forgotten(safe_text(
                f"{self._name}: the controller does not know it (never submitted, or ended long "
                f"enough ago that it forgot it: MinJobAge) and accounting is off there (sacct: "
                f"{sacct_said}), so Slurm has nothing left to say of it; read its output file "
                f"instead: rlwatch {host}:PATH (sbatch's default is slurm-{self.target.job_id}.out "
                "in the directory it was submitted from)"), sacct_said)
        raise SourceError(safe_text(f"{self._name}: Slurm cannot say (scontrol: {scontrol_said}; "
                                    f"sacct: {sacct_said})"))

    async def stream(self, start: int, follow: bool) -> AsyncIterator[SourceEvent]:
        """The job's state first, then its output file's events; followed, the state again
        whenever it changes, until the job ends (the file is followed on)."""
        assert self.job is not None
        yield JobState(self.job.record)
        if not self._log_open:  # pending when connect() looked
            if not follow:
                return
            async for event in self._until_started():
                yield event
            if not self._log_open:
                return
        events = aiter(self.log.stream(start, follow))
        if not follow or self.job.record.ended:
            async for event in events:
                yield event
            return
        async for event in self._with_polls(events):
            yield event

    async def _until_started(self) -> AsyncIterator[SourceEvent]:
        """Ask again until the job leaves the queue, then open its output file."""
        assert self.job is not None
        while self.job.record.outcome == JobOutcome.PENDING and self._asking:
            await asyncio.sleep(self.poll_s)
            for event in await self._poll():
                yield event
        if (self.job.record.ended or not self._asking) and not self.job.record.nodes:
            yield Status(safe_text(f"{self._name} ended {self.job.record.state} before it started"),
                         ok=False)
            return
        note = await self._open_log()
        if note:
            yield Status(note)

    async def _with_polls(self, events: AsyncIterator[SourceEvent]) -> AsyncIterator[SourceEvent]:
        """``events`` as they come, and a ``JobState`` when a poll finds the job changed;
        the polls stop once the job has ended (or Slurm has forgotten it)."""
        assert self.job is not None
        pending: asyncio.Task[SourceEvent] | None = None
        loop = asyncio.get_running_loop()
        next_poll = loop.time() + self.poll_s
        try:
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(anext(events))
                polling = self._asking and not self.job.record.ended
                done, _ = await asyncio.wait(
                    {pending}, timeout=max(0.0, next_poll - loop.time()) if polling else None)
                if pending in done:
                    try:
                        event = pending.result()
                    except StopAsyncIteration:
                        return
                    pending = None
                    yield event
                    continue
                next_poll = loop.time() + self.poll_s
                for polled in await self._poll():
                    yield polled
        finally:
            if pending is not None:
                pending.cancel()
                with suppress(asyncio.CancelledError, StopAsyncIteration, Exception):
                    await pending
            with suppress(Exception):
                await events.aclose()  # type: ignore[attr-defined]

    async def _poll(self) -> list[SourceEvent]:
        """Ask Slurm again: the new state when it changed; a status when it cannot be asked
        (the connection is down: the log's own reconnect brings it back). Where Slurm has
        forgotten the job, its last word is kept, marked as such, and it is not asked again:
        the output file alone says how the job went on."""
        assert self.job is not None
        try:
            job = await self._ask()
        except _Forgotten as error:
            self._asking = False
            self.job = forgotten(self.job, FORGOTTEN_NOTE)
            said = (f"{self._name}: the controller no longer knows it and accounting is off there "
                    f"(sacct: {error.sacct_said}); {FORGOTTEN_NOTE}")
            return [JobState(self.job.record), Status(safe_text(said), ok=False)]
        except SourceError as error:
            return [Status(f"the state of {self._name} was not read: {error}", ok=False)]
        before, self.job = self.job.record, job
        return [JobState(job.record)] if _changed(before, job.record) else []

    async def read_range(self, start: int, end: int) -> bytes:
        return await self.log.read_range(start, end)

    async def close(self) -> None:
        await self.log.close()

    def accelerator_host(self) -> AcceleratorHost:
        """The login node, over the log's connection (the job's GPUs are its nodes':
        ``node_host``)."""
        return self.log.accelerator_host()

    async def node_host(self, node: str) -> AcceleratorHost:
        """``node``, reached through the login node as a jump host (one connection each)."""
        if node not in self._nodes:
            self._nodes[node] = await other_host(node, self.accept_new_host_key,
                                                 via=lambda: self.log.connection)
        return self._nodes[node]


def _changed(before: JobRecord, after: JobRecord) -> bool:
    """A change worth telling: the state, its reason, the nodes or the limit (a running
    job's start, read as now minus its run time, moves by the poll's rounding alone)."""
    return replace(before, started_at=None) != replace(after, started_at=None) or \
        (before.started_at is None) != (after.started_at is None)


async def list_jobs(login: RemoteLog) -> list[SlurmJob]:
    """The jobs squeue lists for the user ``login`` is connected as."""
    answer = await login.run(commands.user_jobs())
    jobs = parse_squeue(answer)
    if not jobs and "command not found" in answer:
        raise SourceError(f"{login.target.host}: no squeue there (is it a Slurm login node?)")
    if not jobs and answer.strip() and not answer.lstrip().startswith(tuple("0123456789")):
        raise SourceError(safe_text(f"{login.target.host}: squeue: {first_line(answer)}"))
    return jobs


async def user_jobs(target: SlurmTarget, accept_new_host_key: bool = False) -> list[SlurmJob]:
    """The user's jobs on ``target``'s login node (squeue), for a fleet view to open each as
    ``slurm://login/JOBID``; SourceError if the login node cannot be asked."""
    from tui.sources.ssh.remote_log import RemoteLog

    login = RemoteLog(target.login, (), accept_new_host_key)
    try:
        await login.open()
        return await list_jobs(login)
    finally:
        await login.close()


def jobs_message(target: SlurmTarget, jobs: list[SlurmJob]) -> str:
    """What to say for ``slurm://login`` until the fleet view shows these jobs: each, and
    how to open it."""
    if not jobs:
        return f"{target.label}: you have no Slurm jobs there (squeue lists none); name one as " \
               f"{target.label}/JOBID"
    lines = [f"{target.label} names no job; pick one of yours (squeue):"]
    for job in jobs:
        record = job.record
        where = f" on {','.join(record.nodes)}" if record.nodes else ""
        why = f" ({record.message})" if record.message else ""
        lines.append(f"  {target.label}/{record.job_id}  {record.state}{why}{where}  {job.name}")
    return safe_text("\n".join(lines), multiline=True)  # names and reasons are the user's text
