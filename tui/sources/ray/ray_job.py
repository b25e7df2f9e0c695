"""A Ray job's driver log and state, as a ``JobSource``.

``connect`` finds the dashboard (directly, or through an SSH port forward to the
head), checks that it is Ray's, and finds the job (the one named, or the newest
running one). Reading once (``check``) takes the log so far in one request; following
(the dashboard) reads Ray's log stream, whose messages come back to back while it
sends what was written before and then at most once a second, so a pause longer than
``quiet_s`` means everything written so far has arrived (``CaughtUp``). What arrives
is spooled to a local file for range reads (read once, a range past what arrived fetches
the log as it is now: ``rlwatch status`` compares the bytes it stopped at before reading
on, as for every log). The job's state is polled every ``poll_s`` and sent as
``JobState`` when it changes; the nodes with it come from the state API. A stream that
breaks is opened again and the bytes already delivered are skipped (Ray always sends
from the start), so nothing is lost or read twice; for ``ray://``, an SSH connection to
the head that dropped is made again first (the pool's new one in a fleet) and the port
forwarded again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from tui.parsers.jobs.ray_jobs import RayJob, describe_jobs, job_nodes, pick_job
from tui.parsers.records import JobRecord
from tui.parsers.text import safe_text
from tui.sources.accelerators.hosts import AcceleratorHost, other_host, this_host
from tui.sources.base import CaughtUp, Data, JobState, SourceError, SourceEvent, Status
from tui.sources.ray.address import RayAddress
from tui.sources.ray.jobs_api import JobNotFound, JobsApi
from tui.sources.ray.spool import Spool

if TYPE_CHECKING:
    from tui.sources.ssh.on_demand import OnDemandRunner
    from tui.sources.ssh.pool import ConnectionPool, Seat
    from tui.sources.ssh.port_forward import Forward

_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0)
# How long a job's end waits for the log stream to deliver its last lines and close.
END_WAIT_S = 5.0
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class RayJobLog:
    """The driver log of one Ray job, followed through the cluster's Jobs API."""

    # The head runs the job's driver (and, on one node, all of it): its accelerators are read
    # as the source's own host; ``JobRecord.nodes`` names the other live nodes.
    own_host_runs_job = True

    def __init__(self, address: RayAddress, accept_new_host_key: bool = False, poll_s: float = 2.0,
                 quiet_s: float = 1.5, nodes_every_s: float = 30.0,
                 pool: ConnectionPool | None = None) -> None:
        """``pool``: a fleet's shared SSH connections; ``ray://`` then forwards the dashboard's
        port over the pool's connection to the head instead of a login of its own."""
        self.address = address
        self._pool = pool
        self._seat: Seat | None = None  # this run's place in the pool, taken at the first connect
        self.accept_new_host_key = accept_new_host_key
        self.poll_s = poll_s
        self.quiet_s = quiet_s
        self.nodes_every_s = nodes_every_s
        self.logger_files = None  # the driver log is the run's console
        self._api: JobsApi | None = None
        self._forward: Forward | None = None
        self._head: AcceleratorHost | None = None  # the head, over SSH made when first read
        self._head_runner: OnDemandRunner | None = None
        self._job: RayJob | None = None
        self._nodes: tuple[str, ...] = ()
        self._spool = Spool()
        self._following = False  # then the log stream alone fills the spool, and says so
        self._filled_at: float | None = None  # when ``_fill`` last fetched the whole log
        self._filled_whole = False  # ... after the job was seen ended: the log grows no more
        self._forwarding = asyncio.Lock()

    @property
    def label(self) -> str:
        """``JOB on DASHBOARD``, once the job is known."""
        job = self._job.name if self._job else self.address.job or "newest running job"
        return f"{job} on {self.address.where}"

    @property
    def api(self) -> JobsApi:
        """The dashboard's client (SourceError before ``connect``)."""
        if self._api is None:
            raise SourceError(f"{self.address.where}: not connected")
        return self._api

    @property
    def job(self) -> RayJob:
        """The job as last read (SourceError before ``connect``)."""
        if self._job is None:
            raise SourceError(f"{self.address.where}: not connected")
        return self._job

    async def connect(self) -> str | None:
        """Reach the dashboard, check it is Ray's and find the job; the line names the job."""
        url = self.address.url
        if self.address.head is not None:
            self._forward = await self._forwarded()
            url = f"http://127.0.0.1:{self._forward.port}"
        self._api = JobsApi(url or "", self.address.where)
        version = await self._api.version()
        self._job, picked = await self._find_job()
        await self._refresh_nodes()
        how = "the newest running job, " if picked else ""
        return safe_text(f"Ray {version}: {how}{self._job.name} ({self._job.status}): {self._job.entrypoint}")

    async def _forwarded(self, dropped: Forward | None = None) -> Forward:
        """``ray://``: a local port forwarded to the dashboard's over an SSH connection to the
        head: the pool's (one login for the head's runs in a fleet), else one of its own;
        ``dropped``: the forward whose connection was lost, which the pool replaces."""
        from tui.sources.ssh.port_forward import forward

        assert self.address.head is not None
        shared = None
        if self._pool is not None:
            self._seat = self._seat or self._pool.seat(self.address.head)
            shared = await self._pool.replace(self._seat, dropped.connection if dropped else None)
        return await forward(self.address.head, self.address.port, self.accept_new_host_key, shared)

    async def _forward_again(self) -> None:
        """``ray://`` whose SSH connection dropped (the head rebooted, the laptop slept): a new
        one and the port forwarded again, once for the log stream and the poller together
        (SourceError while the head cannot be reached); nothing to do while it is up."""
        lost = self._forward
        if lost is None or not lost.connection.is_closed():
            return
        async with self._forwarding:
            if self._forward is not lost:  # the other task made the new one
                return
            await lost.close()
            self._forward = await self._forwarded(lost)
            self.api.base_url = f"http://127.0.0.1:{self._forward.port}"

    async def _find_job(self) -> tuple[RayJob, bool]:
        where = self.address.where
        if self.address.job is None:
            jobs = await self.api.jobs()
            job = pick_job(jobs)
            if job is None:
                raise SourceError(safe_text(f"{where}: no running job to watch; name one "
                                            f"(…/JOB): {describe_jobs(jobs)}"))
            return job, True
        try:
            job = await self.api.job(self.address.job)
        except JobNotFound:
            jobs = await self.api.jobs()
            raise SourceError(safe_text(f"{where}: no job {self.address.job}; its jobs: "
                                        f"{describe_jobs(jobs)}")) from None
        if job.submission_id is None:
            raise SourceError(safe_text(
                f"{where}: job {job.name} was not submitted with `ray job submit` (a script that called "
                "ray.init itself): Ray keeps no log of it; watch its console log instead"))
        return job, False

    async def _refresh_nodes(self) -> None:
        """The nodes the job's accelerators are read on; the state API may be off or busy,
        and then the head alone is read."""
        try:
            self._nodes = job_nodes(await self.api.nodes())
        except SourceError:
            pass

    async def _record(self) -> JobRecord:
        self._job = await self.api.job(self.job.name)
        return self._job.record(self._nodes)

    async def stream(self, start: int, follow: bool) -> AsyncIterator[SourceEvent]:
        """The driver log from ``start`` and the job's state; following, until cancelled."""
        submission_id = self.job.submission_id or self.job.name
        if not follow:
            record = await self._record()
            await self._fill()
            yield JobState(record)
            if self._spool.size > start:
                yield Data(start, await self._spool.read(start, self._spool.size))
            return
        async for event in self._follow(start, submission_id):
            yield event

    async def _fill(self) -> None:
        """Bring the spool up to the log as it is now (Ray serves it whole, never a range)."""
        ended = self._job is not None and self._job.record(()).ended  # seen before the fetch
        data = (await self.api.logs(self.job.submission_id or self.job.name)).encode("utf-8", "replace")
        self._filled_at, self._filled_whole = time.monotonic(), ended
        if len(data) > self._spool.size:  # the spool holds a prefix of the log
            self._spool.append(data[self._spool.size:])

    async def _follow(self, start: int, submission_id: str) -> AsyncIterator[SourceEvent]:
        self._following = True
        if self._spool.size > start:
            yield Data(start, await self._spool.read(start, self._spool.size))
        queue: asyncio.Queue[SourceEvent] = asyncio.Queue()
        tasks = [asyncio.create_task(self._tail(submission_id, queue)),
                 asyncio.create_task(self._poll(queue))]
        unsettled = True  # bytes arrived since the last CaughtUp
        # The job's end, polled before the stream has sent the log's last lines: held until it
        # has (or END_WAIT_S), so the end is told with the step the job reached, not one before.
        ended: JobState | None = None
        ended_by = 0.0
        try:
            while True:
                wait = self.quiet_s if unsettled else None
                if ended is not None:
                    wait = max(0.0, min(wait if wait is not None else END_WAIT_S, ended_by - time.monotonic()))
                try:
                    event = await asyncio.wait_for(queue.get(), wait)
                except asyncio.TimeoutError:
                    event = CaughtUp()
                if isinstance(event, JobState) and event.record.ended and not tasks[0].done():
                    ended, ended_by = event, time.monotonic() + END_WAIT_S
                    continue
                if ended is not None and (tasks[0].done() or time.monotonic() >= ended_by):
                    yield ended
                    ended = None
                if isinstance(event, CaughtUp):
                    if not unsettled:
                        continue
                    unsettled = False
                elif isinstance(event, Data):
                    unsettled = True
                yield event
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _tail(self, submission_id: str, queue: asyncio.Queue[SourceEvent]) -> None:
        """Put the log's new bytes on ``queue`` until Ray closes the stream of an ended job."""
        failures = 0
        while True:
            seen = 0  # bytes of this stream, which always starts at the log's start
            try:
                await self._forward_again()
                async for text in self.api.tail(submission_id):
                    data = text.encode("utf-8", "replace")
                    fresh = data[max(0, self._spool.size - seen):] if seen + len(data) > self._spool.size else b""
                    seen += len(data)
                    if fresh:
                        queue.put_nowait(Data(self._spool.append(fresh), fresh))
                    if failures:
                        failures = 0
                        queue.put_nowait(Status(f"{self.address.where}: reading the job's log again"))
                if (await self._record()).ended:
                    queue.put_nowait(CaughtUp())
                    return
                delay = _BACKOFF_S[0]  # the dashboard closed the stream of a running job: restarted?
            except SourceError as error:
                delay = _BACKOFF_S[min(failures, len(_BACKOFF_S) - 1)]
                failures += 1
                queue.put_nowait(Status(f"{error}; trying again in {delay:g} s", ok=False))
            await asyncio.sleep(delay)

    async def _poll(self, queue: asyncio.Queue[SourceEvent]) -> None:
        """Put the job's state on ``queue`` each time it changes, until the job has ended."""
        last: JobRecord | None = None
        nodes_at = time.monotonic()
        problem: str | None = None
        while True:
            try:
                await self._forward_again()
                if time.monotonic() - nodes_at >= self.nodes_every_s:
                    nodes_at = time.monotonic()
                    await self._refresh_nodes()
                record = await self._record()
                if problem is not None:
                    problem = None
                    queue.put_nowait(Status(f"{self.address.where}: the job's state is read again"))
            except SourceError as error:
                if str(error) != problem:
                    problem = str(error)
                    queue.put_nowait(Status(f"the job's state: {error}", ok=False))
            else:
                if record != last:
                    last = record
                    queue.put_nowait(JobState(record))
                if record.ended:
                    return
            await asyncio.sleep(self.poll_s)

    async def read_range(self, start: int, end: int) -> bytes:
        """The bytes in ``[start, end)`` of the log as it has arrived (not following, as it
        is now: the bytes the log stream has not brought yet are the stream's to deliver)."""
        if end > self._spool.size and not self._following and not self._filled_lately():
            await self._fill()
        return await self._spool.read(start, end)

    def _filled_lately(self) -> bool:
        """Whether the spool holds the log as it is now: fetched after the job ended (its log
        grows no more), or less than a state poll ago. Ray serves the log only whole, so a
        ``check`` that reads past the end (a small log's config head, a sample's window) would
        otherwise download it all again."""
        return self._filled_whole or (self._filled_at is not None
                                      and time.monotonic() - self._filled_at < self.poll_s)

    def accelerator_host(self) -> AcceleratorHost:
        """The head: over the SSH connection of ``ray://``; this machine for a dashboard on
        loopback; else the dashboard's host, over SSH made when first read."""
        if self.address.head is not None:  # the forward's connection, whichever is live now
            from tui.sources.ssh.ssh_runner import SshRunner

            head = self.address.head.host
            return AcceleratorHost(SshRunner(lambda: self._live_forward().connection, head), head, False)
        if self.address.host in _LOOPBACK:
            return this_host()
        if self._head is None:  # one connection however often it is asked for
            from tui.sources.ssh.on_demand import on_demand_host

            self._head, self._head_runner = on_demand_host(self.address.host, self.accept_new_host_key)
        return self._head

    def _live_forward(self) -> Forward:
        if self._forward is None:
            raise SourceError(f"{self.address.where}: not connected")
        return self._forward

    async def node_host(self, node: str) -> AcceleratorHost:
        """A worker node (by its IP): through the head for ``ray://``; else directly, as
        ``ray+http://`` reaches nothing but the dashboard through the head (SourceError, which
        becomes the node's accelerator line, says so where the node cannot be reached)."""
        if self._forward is not None:  # through the head's connection of the moment
            return await other_host(node, self.accept_new_host_key,
                                    via=lambda: self._live_forward().connection)
        try:
            return await other_host(node, self.accept_new_host_key)
        except SourceError as error:
            raise SourceError(f"{error} (ray+http:// reaches a worker node directly over SSH; "
                              f"ray://{self.address.host}/JOB goes through the head)") from None

    async def close(self) -> None:
        """Close the HTTP session, the SSH connection and the spool (each once)."""
        if self._api is not None:
            await self._api.close()
        if self._forward is not None:
            await self._forward.close()
            self._forward = None
        if self._head_runner is not None:
            await self._head_runner.close()
            self._head, self._head_runner = None, None
        self._spool.close()
