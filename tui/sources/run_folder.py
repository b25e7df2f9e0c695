"""Where a run's other files are: its dumps, file-logger JSONL and TensorBoard events.

The console log is read through a LogSource; the files beside it through a
RunFolder, on this machine (``LocalFolder``) or on the training box
(``tui.sources.ssh.remote_folder.RemoteFolder``, over the log's own SSH
connection). The step detail, the report and the logger feeds ask the same
questions of both, so a remote run shows what a local one shows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePath
from typing import Protocol

from tui.regular_file import read_regular
from tui.sources.base import LogSource
from tui.sources.dump_dirs import DumpDir, find_dump_dirs
from tui.sources.local_file import LocalFile
from tui.sources.run_files import LoggerFiles, find_logger_files


class RunFolder(Protocol):
    """The run's files other than its console log."""

    @property
    def root(self) -> PurePath:
        """Where the run's files are looked for."""

    async def dump_dirs(self) -> list[DumpDir]:
        """Rollout and validation dump directories under ``root``."""

    async def read(self, path: PurePath) -> bytes:
        """A whole file (a dump); OSError or SourceError when it cannot be read."""

    async def logger_files(self) -> LoggerFiles:
        """The JSONL and TensorBoard directory the log points at."""

    def jsonl_source(self, path: PurePath) -> LogSource:
        """A followable source for the file-logger JSONL at ``path``."""

    def event_sync(self, directory: PurePath
                   ) -> tuple[Path, Callable[[], Awaitable[float | None]] | None]:
        """A local directory holding ``directory``'s event files, and what brings it up to
        date before each read (None when it is the directory itself); that returns when
        the files were last written on their host (None: unknown)."""


class LocalFolder:
    """The run's files on this machine: the run directory named, else the log's folder."""

    def __init__(self, log: Path, run_dir: Path | None = None,
                 files: LoggerFiles | None = None) -> None:
        """``files``: the logger files that are the run, when it has no console log
        (``log`` is then the JSONL or event directory read)."""
        self.log = log
        self.run_dir = run_dir
        self.root = run_dir if run_dir is not None else log.parent
        self.files = files

    async def dump_dirs(self) -> list[DumpDir]:
        return await asyncio.to_thread(find_dump_dirs, Path(self.root))

    async def read(self, path: PurePath) -> bytes:
        return await asyncio.to_thread(read_regular, path)  # never a FIFO in a dump folder

    async def logger_files(self) -> LoggerFiles:
        if self.files is not None:
            return self.files
        return await asyncio.to_thread(find_logger_files, self.log, self.run_dir)

    def jsonl_source(self, path: PurePath) -> LogSource:
        return LocalFile(Path(path))

    def event_sync(self, directory: PurePath
                   ) -> tuple[Path, Callable[[], Awaitable[float | None]] | None]:
        return Path(directory), None


def folder_for(source: LogSource, run_dir: Path | None = None) -> RunFolder | None:
    """The folder of ``source``'s run: local, remote, or None for a log with no place (the demo)."""
    if isinstance(source, LocalFile):
        return LocalFolder(source.path, run_dir)
    from tui.sources.logger_run import LocalLoggerRun

    if isinstance(source, LocalLoggerRun):
        return LocalFolder(source.path, run_dir, source.logger_files)
    from tui.sources.ssh.remote_log import RemoteLog

    if isinstance(source, RemoteLog):
        from tui.sources.ssh.remote_folder import RemoteFolder

        return RemoteFolder(source)
    return None
