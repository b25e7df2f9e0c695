"""Runs known only by their logger files: TensorBoard event files or verl's file-logger JSONL.

verl started with ``trainer.logger=['tensorboard']`` or ``['file']`` writes no
console metrics, and the console output of a run is often not kept at all
(a cluster job's stdout gone with the job). Such a run is still a run: its
directory holds ``tensorboard_log/<project>/<experiment>/events.out.tfevents.*``
or ``<project>/<experiment>.jsonl`` (VERL_FORMATS.md §2–3), and those files
hold every value, exact. So a directory with no console log, a bare JSONL,
or a directory of event files is read from those files alone.

In a directory several experiments may have written; as for console logs
(``tui.sources.discovery``), the newest is taken and the choice is said,
and ``--log`` names another. An experiment's JSONL and its event directory
(``<project>/<experiment>.jsonl`` and ``…/<project>/<experiment>/``, one run
with ``['file', 'tensorboard']``) are read together, the JSONL's exact values
winning. Only files of verl's schema are taken: a directory's other
``*.jsonl`` (rollout dumps, datasets) are not a run.

Such a run is a ``LogSource`` that streams nothing (``LocalLoggerRun``; a
remote one is a ``RemoteLog`` with ``logger_files`` set): everything above it
(the model, the feeds of ``tui.session.logger_feeds``, check/report/export/status and
the dashboard) reads it as it reads a run whose console log points at the
files, with no console lines.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath

from tui.regular_file import is_regular, open_regular
from tui.parsers.verl_jsonl import HEAD_BYTES, is_file_logger_head
from tui.parsers.verl_loggers import LoggerHints, logger_hints
from tui.sources.accelerators.hosts import AcceleratorHost, this_host
from tui.sources.base import SourceEvent
from tui.sources.discovery import NoLogFound, walk_files
from tui.sources.run_files import LoggerFiles, sniff_log
from tui.sources.tensorboard_events import is_event_file

TENSORBOARD = "tensorboard"
JSONL = "jsonl"


@dataclass(frozen=True, slots=True)
class LoggerCandidate:
    """One experiment's files found in a directory: an event directory or a JSONL, and when
    it was last written (the newest event file's modification time for a directory)."""

    kind: str  # TENSORBOARD or JSONL
    path: PurePath
    mtime: float


def nothing_found(where: object) -> NoLogFound:
    """The error for a directory that holds no run at all, console or logger files."""
    return NoLogFound(f"{where}: no training log (*.log, *.out, *.txt), TensorBoard event files "
                      "or verl file-logger JSONL found (not a training log?); "
                      "pass --log FILE to name one")


def choose_logger_run(found: Iterable[LoggerCandidate], where: object
                      ) -> tuple[LoggerFiles, str, PurePath]:
    """The newest experiment among ``found`` (with its same-named counterpart of the other
    logger), the line saying which was taken, and the path that names the run (the newest
    file or directory); ``nothing_found`` when there is none."""
    found = list(found)
    if not found:
        raise nothing_found(where)
    newest = max(found, key=lambda c: (c.mtime, str(c.path)))
    partner = next((c for c in found
                    if c.kind != newest.kind and _experiment(c) == _experiment(newest)), None)
    chosen = [newest] + ([partner] if partner is not None else [])
    by_kind = {c.kind: c.path for c in chosen}
    experiments = len({_experiment(c) for c in found})
    what = {TENSORBOARD: "TensorBoard event files", JSONL: "the file-logger JSONL"}[newest.kind]
    note = f"reading {what} {newest.path}"
    if partner is not None:
        note += f" and {partner.path}"
    note += (f" (no console log; newest of {experiments} experiment(s) found"
             + ("; --log names another)" if experiments > 1 else ")"))
    files = LoggerFiles(by_kind.get(JSONL), by_kind.get(TENSORBOARD), (), alone=True,
                        written_at=max(c.mtime for c in chosen))
    return files, note, newest.path


def logger_files_instead(hints: LoggerHints, log_mtime: float,
                         found: list[LoggerCandidate]) -> bool:
    """Whether a directory's logger files, rather than its newest log-like file, are the run,
    when no log-like file has a verl step line.

    Such a file may be a young run's console (keep it: it will print steps,
    and says where its logger files go), or no console at all: Hydra's
    ``outputs/<date>/<time>/main_ppo.log`` of a run logging only to TensorBoard
    (verl prints to stdout, not to Python logging), a ``requirements.txt``.
    It is taken for the latter when it names no verl logger at all (no config
    dump, no "Saving tensorboard log to") and the logger files were written
    after it.
    """
    return hints == LoggerHints() and any(c.mtime > log_mtime for c in found)


def _experiment(candidate: LoggerCandidate) -> tuple[str, str]:
    """(project, experiment) as verl names the files: ``<project>/<experiment>.jsonl``
    and ``tensorboard_log/<project>/<experiment>/``."""
    path = candidate.path
    name = path.name[:-len(".jsonl")] if candidate.kind == JSONL else path.name
    return path.parent.name, name


def read_head(path: Path) -> bytes:
    """The first bytes of ``path`` that say whether it is a file-logger JSONL (b"" if unreadable)."""
    try:
        with open_regular(path) as handle:  # a FIFO named *.jsonl would hang a plain open
            return handle.read(HEAD_BYTES)
    except OSError:
        return b""


def is_file_logger_jsonl(path: Path) -> bool:
    """True for a readable file whose first line is a verl file-logger record."""
    return is_file_logger_head(read_head(path))


def local_candidates(directory: Path) -> list[LoggerCandidate]:
    """The event directories and verl JSONLs under ``directory``, as deep as log discovery looks."""
    event_dirs: dict[Path, float] = {}
    out: list[LoggerCandidate] = []
    for path in walk_files(directory):
        try:
            if is_event_file(path.name) and is_regular(path):  # a FIFO would hang its reader
                mtime = path.stat().st_mtime
                event_dirs[path.parent] = max(mtime, event_dirs.get(path.parent, mtime))
            elif path.name.endswith(".jsonl") and is_file_logger_jsonl(path):
                out.append(LoggerCandidate(JSONL, path, path.stat().st_mtime))
        except OSError:
            continue
    out += [LoggerCandidate(TENSORBOARD, path, mtime) for path, mtime in event_dirs.items()]
    return out


class LocalLoggerRun:
    """A run on this machine with no console log: a source that streams nothing, and the
    logger files that are the run (read by ``tui.session.logger_feeds`` through a ``LocalFolder``)."""

    def __init__(self, path: Path, logger_files: LoggerFiles) -> None:
        """``path``: the file or directory read (a JSONL, or an experiment's event directory)."""
        self.path = path
        self.logger_files = logger_files

    @property
    def label(self) -> str:
        return str(self.path)

    async def connect(self) -> str | None:
        return None

    async def stream(self, start: int, follow: bool) -> AsyncIterator[SourceEvent]:
        """No console bytes: the feeds of the logger files bring the steps."""
        return
        yield  # an async generator that ends at once

    async def read_range(self, start: int, end: int) -> bytes:
        return b""

    async def close(self) -> None:
        return None

    def accelerator_host(self) -> AcceleratorHost:
        return this_host()


def local_run_instead_of(log: Path, directory: Path) -> tuple[LocalLoggerRun, str] | None:
    """The run of ``directory``'s logger files when ``log`` (its newest log-like file, with no
    verl step line) is not the run's console (``logger_files_instead``); else None."""
    found = local_candidates(directory)
    if not found or not logger_files_instead(logger_hints(sniff_log(log)), _mtime(log), found):
        return None
    files, note, named = choose_logger_run(found, directory)
    return LocalLoggerRun(Path(named), files), f"{note}; {log} has no verl step lines"


def local_logger_run(path: Path) -> tuple[LocalLoggerRun, str | None] | None:
    """``path`` as a run of logger files: a verl JSONL, an event file (its directory), or a
    directory searched for them; None for a file that is neither (a console log)."""
    if path.is_dir():
        return logger_dir_run(path)
    if is_event_file(path.name) and is_regular(path):  # else refused as the log it is named as
        return _single(TENSORBOARD, path.parent, path.stat().st_mtime), None
    if is_file_logger_jsonl(path):
        return _single(JSONL, path, path.stat().st_mtime), None
    return None


def logger_dir_run(directory: Path) -> tuple[LocalLoggerRun, str | None]:
    """The run of the newest experiment's logger files under ``directory``, and a line saying
    which (``NoLogFound`` when it holds none)."""
    files, note, named = choose_logger_run(local_candidates(directory), directory)
    return LocalLoggerRun(Path(named), files), note


def _single(kind: str, path: Path, mtime: float) -> LocalLoggerRun:
    """The run of one named JSONL or event directory."""
    if kind == TENSORBOARD:
        mtime = max([mtime, *(_mtime(p) for p in path.iterdir() if is_event_file(p.name))])
    files = LoggerFiles(path if kind == JSONL else None, path if kind == TENSORBOARD else None, (),
                        alone=True, written_at=mtime)
    return LocalLoggerRun(path, files)


def _mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
