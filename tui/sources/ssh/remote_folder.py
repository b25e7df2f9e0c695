"""A remote run's dumps, file-logger JSONL and TensorBoard events, over the log's connection.

Each question costs one round trip: a ``find`` lists the files that matter
(dumps, JSONL, event files) with their sizes; a dump is fetched whole only
when its step is opened; event files are mirrored into a local temporary
directory by appending the bytes past what is mirrored, so TensorBoard's own
reader follows them as it follows local files, and nothing is copied twice.
Nothing is written on the box.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePath, PurePosixPath

from tui.parsers.verl_loggers import HINT_NEEDLES, logger_hints
from tui.scratch import scratch_dir
from tui.sources.base import LogSource
from tui.sources.dump_dirs import MAX_DEPTH, DumpDir, dump_dirs_in
from tui.sources.run_files import (
    LoggerFiles,
    bases_of,
    candidate_paths,
    choose_logger_files,
)
from tui.sources.ssh import remote_commands
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.remote_logger_run import BoxTimes, box_now_of
from tui.sources.tensorboard_events import EVENT_FILE_MARK, EventMirror, is_event_file

_LOGGER_FILES = ("*.jsonl", f"{EVENT_FILE_MARK}*")


class RemoteFolder:
    """The files of the run whose log ``source`` reads: the run directory, else the log's folder."""

    def __init__(self, source: RemoteLog) -> None:
        self.source = source
        # Mirrors of event directories, kept while this folder lives.
        self._mirrors: list = []  # TemporaryDirectory objects: removed with this folder

    # Read from the source each time: it knows its log only once connected.
    @property
    def log(self) -> PurePosixPath:
        return PurePosixPath(self.source.path)

    @property
    def run_dir(self) -> PurePosixPath | None:
        return PurePosixPath(self.source.run_dir) if self.source.run_dir else None

    @property
    def root(self) -> PurePath:
        return self.run_dir or self.log.parent

    async def _listing(self, roots: list[PurePath], depth: int) -> dict[PurePosixPath, int]:
        """Sizes of the dump, JSONL and event files under ``roots``."""
        return {path: size for path, (size, _) in (await self._stat_listing(roots, depth)).items()}

    async def _stat_listing(self, roots: list[PurePath], depth: int
                            ) -> dict[PurePosixPath, tuple[int, float | None]]:
        """Size and modification time (on this machine's clock; None where the box gives
        no time of its own) of the dump, JSONL and event files under ``roots``."""
        out = await self.source.run(
            remote_commands.list_files([str(root) for root in roots], depth, _LOGGER_FILES),
            binary=True)
        found = {}
        times = BoxTimes(None, time.time())
        for record in out.split(b"\0"):
            if (now := box_now_of(record)) is not False:
                times = BoxTimes(now, times.received_at)
                continue
            size, _, rest = record.partition(b" ")
            mtime, _, path = rest.partition(b" ")
            try:
                when = float(mtime)
            except ValueError:
                continue
            if size.isdigit() and path:
                found[PurePosixPath(path.decode("utf-8", "surrogateescape"))] = (int(size), when)
        return {path: (size, times.here(when)) for path, (size, when) in found.items()}

    async def dump_dirs(self) -> list[DumpDir]:
        return dump_dirs_in(await self._listing([self.root], MAX_DEPTH + 1))

    async def read(self, path: PurePath) -> bytes:
        return await self.source.run(remote_commands.read_range(str(path), 0, None), binary=True)

    async def logger_files(self) -> LoggerFiles:
        if self.source.logger_files is not None:  # a run with no console log: these files are it
            return self.source.logger_files
        text = await self.source.run(remote_commands.hint_lines(str(self.log), HINT_NEEDLES))
        hints = logger_hints(text)
        bases = bases_of(self.log, self.run_dir)
        candidates = candidate_paths(hints, bases)
        listing = await self._listing(candidates, 1) if candidates else {}
        return choose_logger_files(hints, bases, lambda path: path in listing,
                                   lambda path: any(file.parent == path for file in listing))

    def jsonl_source(self, path: PurePath) -> LogSource:
        return RemoteLog.sharing(self.source, str(path))

    def event_sync(self, directory: PurePath
                   ) -> tuple[Path, Callable[[], Awaitable[float | None]] | None]:
        mirror_dir = scratch_dir("rlwatch-events-")
        self._mirrors.append(mirror_dir)
        mirror = EventMirror(Path(mirror_dir.name))

        async def sync() -> float | None:
            """Bring each event file's new bytes (one listing, then one range read per grown
            file); return when the box last wrote one of them (the mirror's times are ours)."""
            written = None
            for path, (size, mtime) in sorted((await self._stat_listing([directory], 1)).items()):
                if path.parent != directory or not is_event_file(path.name):
                    continue
                if mtime is not None:
                    written = mtime if written is None else max(written, mtime)
                have = mirror.size(path.name)
                if size > have:
                    data = await self.source.run(remote_commands.read_range(str(path), have, size),
                                                 binary=True)
                    mirror.append(path.name, have, data)
            return written

        return Path(mirror_dir.name), sync
