"""A Ray job's log stream that breaks mid-run is opened again and resumes where it was: Ray
resends the log from its start, and the bytes already delivered are skipped, so what the
source delivered is the driver log exactly, nothing lost, nothing doubled."""

from __future__ import annotations

import asyncio
import contextlib

from tests.support import until
from tui.sources.base import Data, JobState
from tui.sources.ray.address import parse_ray_target
from tui.sources.ray.ray_job import RayJobLog


class CuttableProxy:
    """127.0.0.1:port → the dashboard, whose open connections ``cut`` closes (a dropped link);
    new ones are served again."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.base_events.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers += [writer, up_writer]
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer),
                             return_exceptions=True)

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()

    def cut(self) -> None:
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()

    async def stop(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


async def test_a_broken_log_stream_resumes_without_losing_or_doubling_a_byte(ray_head, monkeypatch):
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"):
        monkeypatch.setenv(name, ray_head.env[name])
    job = ray_head.submit("rlw-cut", 8, "finish", delay=0.3)
    proxy = CuttableProxy(ray_head.port)
    port = await proxy.start()
    source = RayJobLog(parse_ray_target(f"ray+http://127.0.0.1:{port}/{job}"), poll_s=0.5, quiet_s=1.0)
    pieces: list[Data] = []
    states: list[str] = []

    async def read() -> None:
        async for event in source.stream(0, follow=True):
            if isinstance(event, Data):
                pieces.append(event)
            elif isinstance(event, JobState):
                states.append(event.record.state)

    def received() -> bytes:
        return b"".join(piece.data for piece in pieces)

    await source.connect()
    reader = asyncio.create_task(read())
    try:
        await until(lambda: b"step:3 -" in received(), 60, "step 3 through the proxy")
        assert b"step:8 -" not in received()
        proxy.cut()
        await until(lambda: "SUCCEEDED" in states and b"step:8 -" in received(), 60, "the job's end")
        await asyncio.sleep(2)  # anything doubled would come now, after the end
        logs = ray_head.api(f"/api/jobs/{job}/logs")
        assert received() == logs["logs"].encode()
        assert [piece.offset for piece in pieces] == [sum(len(p.data) for p in pieces[:i])
                                                      for i in range(len(pieces))]
        step_5 = received().index(b"step:5 -")
        assert await source.read_range(step_5, step_5 + 8) == b"step:5 -"
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        await source.close()
        await proxy.stop()
