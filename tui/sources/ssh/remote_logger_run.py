"""A remote run with no console log, read from its logger files over the log's connection.

The remote half of ``tui.sources.logger_run``: when a remote run directory
holds no ``*.log``/``*.out``/``*.txt``, one more round trip lists its event
files and JSONLs (the box checks each JSONL's first line against verl's
schema, so a directory full of rollout dumps costs no extra trips), and the
same choice as on local disk is made. A ``.jsonl`` or event file named as the
target is checked the same way. The ``RemoteLog`` then streams no console
bytes; ``RemoteFolder`` hands these files to the logger feeds, which follow
them over the same connection.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from tui.parsers.verl_jsonl import HEAD_BYTES, RECORD_START, is_file_logger_head
from tui.parsers.verl_loggers import HINT_NEEDLES, logger_hints
from tui.sources.base import SourceError
from tui.sources.discovery import MAX_DEPTH
from tui.sources.logger_run import (
    JSONL,
    TENSORBOARD,
    LoggerCandidate,
    choose_logger_run,
    logger_files_instead,
)
from tui.sources.run_files import LoggerFiles
from tui.sources.ssh import remote_commands
from tui.sources.tensorboard_events import EVENT_FILE_MARK, is_event_file


@dataclass(frozen=True, slots=True)
class BoxTimes:
    """Turns the box's modification times into this machine's, as ``box_clock`` does a log's:
    shifted by the offset between the box's ``date +%s`` and our time when the listing came,
    never later than then. Without the box's time, None: a clock that cannot be compared
    with ours is not trusted (an hour behind, it would call every run stalled)."""

    box_now: float | None
    received_at: float

    def here(self, box_mtime: float | None) -> float | None:
        """``box_mtime`` on our clock (None: unknown, as is a time the box did not give)."""
        if self.box_now is None or box_mtime is None:
            return None
        return min(box_mtime + (self.received_at - self.box_now), self.received_at)


def box_now_of(record: bytes) -> float | None | bool:
    """The box's time from a listing's last record ``NOW <seconds>`` (None: the box gave
    none); False for any other record."""
    if not record.startswith(b"NOW"):
        return False
    seconds = record[3:].strip()
    return float(seconds) if seconds.isdigit() else None


async def listed_candidates(source, root: str) -> tuple[list[LoggerCandidate], BoxTimes]:
    """The event directories and verl JSONLs under ``root`` on the box (their times the box's),
    in one round trip, and how to put those times on this machine's clock.

    As deep as local discovery looks: files in folders up to ``MAX_DEPTH`` below ``root``.
    """
    out = await source.run(remote_commands.list_logger_files(
        root, MAX_DEPTH + 1, RECORD_START, EVENT_FILE_MARK, HEAD_BYTES), binary=True)
    received_at = time.time()
    event_dirs: dict[PurePosixPath, float] = {}
    found: list[LoggerCandidate] = []
    box_now = None
    for record in out.split(b"\0"):
        if (now := box_now_of(record)) is not False:
            box_now = now
            continue
        kind, _, rest = record.partition(b" ")
        mtime, _, raw = rest.partition(b" ")
        if not mtime.isdigit() or not raw:
            continue
        path = PurePosixPath(raw.decode("utf-8", "surrogateescape"))
        if kind == b"J":
            found.append(LoggerCandidate(JSONL, path, float(mtime)))
        elif kind == b"E" and is_event_file(path.name):
            event_dirs[path.parent] = max(float(mtime), event_dirs.get(path.parent, 0.0))
    found += [LoggerCandidate(TENSORBOARD, path, mtime) for path, mtime in event_dirs.items()]
    return found, BoxTimes(box_now, received_at)


async def find_logger_run(source, directory: str,
                          listed: tuple[list[LoggerCandidate], BoxTimes] | None = None) -> str:
    """Make ``source`` (a connected RemoteLog of a directory without a console log) the run
    of the newest experiment's logger files there (``listed``: already listed); the line
    saying which."""
    found, times = listed or await listed_candidates(source, directory)
    files, note, named = choose_logger_run(found, f"{source.target.host}:{directory}")
    source.path, source.run_dir = str(named), directory
    source.logger_files = replace(files, written_at=times.here(files.written_at))
    return f"{note.replace(str(named), source.label, 1)}"


async def instead_of_log(source, chosen: tuple[bool, int, str]) -> str | None:
    """When the log discovery chose (``(has_steps, mtime, path)``, the box's time) has no verl
    step line and is not verl's console (``logger_files_instead``), make ``source`` the run
    of the directory's logger files and return the line saying so; else None, at no cost
    for a log with step lines."""
    has_steps, mtime, log = chosen
    if has_steps:
        return None
    directory = source.target.path
    hints = logger_hints(await source.run(remote_commands.hint_lines(log, HINT_NEEDLES)))
    listed = await listed_candidates(source, directory)
    if not listed[0] or not logger_files_instead(hints, float(mtime), listed[0]):
        return None
    note = await find_logger_run(source, directory, listed)
    return f"{note}; {source.target.host}:{log} has no verl step lines"


async def named_logger_file(source) -> bool:
    """If ``source``'s file (a connected RemoteLog of a file) is a verl JSONL or an event
    file, make the source that run; False for anything else (a console log)."""
    path = PurePosixPath(source.path)
    if is_event_file(path.name):
        found, times = await listed_candidates(source, str(path.parent))
        candidates = [c for c in found if c.kind == TENSORBOARD and c.path == path.parent]
        if not candidates:
            raise SourceError(f"{source.label}: cannot be read")
        source.path = str(path.parent)
        source.logger_files = LoggerFiles(None, path.parent, (), alone=True,
                                          written_at=times.here(candidates[0].mtime))
        return True
    if path.suffix != ".jsonl":
        return False
    head = await source.run(remote_commands.read_range(str(path), 0, HEAD_BYTES), binary=True)
    if not is_file_logger_head(head):
        return False
    found, times = await listed_candidates(source, str(path))
    listed = [c for c in found if c.path == path]
    source.logger_files = LoggerFiles(path, None, (), alone=True,
                                      written_at=times.here(listed[0].mtime) if listed else None)
    return True
