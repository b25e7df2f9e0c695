"""Ray's dashboard over HTTP: the Jobs API (a job, the job list, the driver log) and the
state API's node list, with every failure turned into one line a user can act on.

The driver log comes two ways (``ray/dashboard/modules/job/job_head.py``): ``GET
/api/jobs/{id}/logs`` is the whole log so far in one JSON object, and the websocket
``/api/jobs/{id}/logs/tail`` sends the log from its start in text messages (up to ten
lines or 20,000 characters each, the last of a burst possibly part of a line), then
each new batch as the driver writes it (Ray looks for more every second), and closes
once the job has ended and its log is read to the end.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from tui.parsers.jobs.ray_jobs import (
    RayApiError,
    RayJob,
    RayNode,
    one_line,
    parse_job,
    parse_jobs,
    parse_nodes,
    ray_version,
)
from tui.parsers.text import safe_text
from tui.sources.base import SourceError
from tui.sources.ray import auth

TIMEOUT_S = 15.0


class JobNotFound(SourceError):
    """The dashboard has no job by that id."""


class JobsApi:
    """One Ray dashboard at ``base_url``; ``where`` names it in messages."""

    def __init__(self, base_url: str, where: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.where = where
        self._session: aiohttp.ClientSession | None = None
        self._token = auth.auth_token() if auth.token_wanted() else None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, connect=TIMEOUT_S,
                                                                                sock_read=TIMEOUT_S * 4))
        return self._session

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    async def _get(self, path: str) -> Any:
        """The JSON at ``path`` (SourceError: unreachable, refused, not found, not JSON)."""
        for attempt in range(2):
            try:
                async with self._client().get(self.base_url + path, headers=self._headers()) as response:
                    body = await response.text(errors="replace")
                    status = response.status
            except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as error:
                raise self._unreachable(error) from None
            if status == 401 and attempt == 0 and self._token is None and (token := auth.auth_token()):
                self._token = token  # the dashboard uses tokens: send the one Ray's CLI would
                continue
            break
        self._refused(status, body)
        if status == 404:
            raise JobNotFound(f"{self.where}: {_said(body) or 'not found'}")
        if status != 200:
            raise SourceError(f"{self.where}: {path} answered HTTP {status}: {_said(body)}")
        try:
            return json.loads(body)
        except ValueError:
            raise SourceError(f"{self.where}: {path} did not answer JSON: not a Ray dashboard?") from None

    def _refused(self, status: int, body: str) -> None:
        if status == 401:
            raise SourceError(f"{self.where}: the dashboard wants Ray's authentication token: {auth.HELP}")
        if status == 403:
            raise SourceError(f"{self.where}: the dashboard refused the token ({_said(body)}); {auth.HELP}")

    def _unreachable(self, error: BaseException) -> SourceError:
        if isinstance(error, asyncio.TimeoutError):
            return SourceError(f"{self.where}: no answer within {TIMEOUT_S:g} s")
        if isinstance(error, aiohttp.ClientConnectorError):
            reason = error.os_error.strerror or str(error.os_error)
            return SourceError(f"{self.where}: cannot connect: {reason} (is Ray's dashboard there?)")
        return SourceError(f"{self.where}: connection lost: {_said(str(error)) or type(error).__name__} "
                           "(is Ray's dashboard there?)")

    @staticmethod
    def _parsed(parse: Any, data: object) -> Any:
        try:
            return parse(data)
        except RayApiError as error:
            raise SourceError(f"not a Ray Jobs API answer: {error}") from None

    async def version(self) -> str:
        """The Ray version of the dashboard (SourceError: nothing there, or not Ray)."""
        try:
            return str(self._parsed(ray_version, await self._get("/api/version")))
        except JobNotFound:
            raise SourceError(f"{self.where}: no /api/version there: not a Ray dashboard") from None

    async def job(self, job_id: str) -> RayJob:
        """One job (JobNotFound when the dashboard has none by that id)."""
        job: RayJob = self._parsed(parse_job, await self._get(f"/api/jobs/{_quote(job_id)}"))
        return job

    async def jobs(self) -> list[RayJob]:
        """Every job the cluster knows, submitted or not."""
        jobs: list[RayJob] = self._parsed(parse_jobs, await self._get("/api/jobs/"))
        return jobs

    async def nodes(self) -> list[RayNode]:
        """The cluster's nodes, from the state API."""
        nodes: list[RayNode] = self._parsed(parse_nodes, await self._get("/api/v0/nodes?limit=1000"))
        return nodes

    async def logs(self, submission_id: str) -> str:
        """The driver log so far."""
        data = await self._get(f"/api/jobs/{_quote(submission_id)}/logs")
        if not isinstance(data, dict) or not isinstance(data.get("logs"), str):
            raise SourceError(f"{self.where}: the job's logs came without their text")
        logs: str = data["logs"]
        return logs

    async def tail(self, submission_id: str) -> AsyncIterator[str]:
        """The driver log from its start, each piece as it arrives, until Ray closes the stream
        (the job ended and its log was read); SourceError when the connection breaks."""
        url = f"{self.base_url}/api/jobs/{_quote(submission_id)}/logs/tail"
        try:
            async with self._client().ws_connect(url, headers=self._headers(), heartbeat=30.0) as socket:
                async for message in socket:
                    if message.type == aiohttp.WSMsgType.TEXT:
                        yield message.data
                    elif message.type == aiohttp.WSMsgType.ERROR:
                        raise self._unreachable(socket.exception() or ConnectionError("websocket error"))
        except aiohttp.WSServerHandshakeError as error:
            self._refused(error.status, error.message)
            raise SourceError(f"{self.where}: the job's log stream answered HTTP {error.status}") from None
        except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as error:
            raise self._unreachable(error) from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _said(text: str) -> str:
    """What the other side said, made one short line that cannot drive a terminal."""
    return safe_text(one_line(text, 200))


def _quote(job_id: str) -> str:
    from urllib.parse import quote

    return quote(job_id, safe="")

