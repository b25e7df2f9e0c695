"""Finding the JSONL and TensorBoard files of the run a console log belongs to.

Paths verl announces are relative to the trainer's working directory, which
is normally where the run was launched: the run directory the user named, or
the directory the log was tee'd into. Both are tried. Nothing is guessed
beyond what the log says (see ``tui.parsers.verl_loggers``), so a directory
full of other experiments' files never leaks into this run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePath

from tui.regular_file import open_regular
from tui.parsers.verl_loggers import LoggerHints, logger_hints
from tui.sources.discovery import SNIFF_BYTES
from tui.sources.tensorboard_events import event_files


@dataclass(frozen=True, slots=True)
class LoggerFiles:
    """The run's file-logger JSONL and TensorBoard directory, where found, and what to tell the user.

    ``alone``: these files are all there is of the run (no console log), so
    they also say when the run last wrote (the stalled rule), from
    ``written_at`` (their newest modification time when found) on.
    """

    jsonl: PurePath | None
    tensorboard: PurePath | None
    notes: tuple[str, ...]
    alone: bool = False
    written_at: float | None = None


def find_logger_files(log: Path, run_dir: Path | None = None) -> LoggerFiles:
    """Look on this machine for the files ``log`` points at, beside ``run_dir`` and the log."""
    return choose_logger_files(logger_hints(sniff_log(log)), bases_of(log, run_dir),
                               lambda path: Path(path).is_file(), lambda path: bool(event_files(Path(path))))


def bases_of(log: PurePath, run_dir: PurePath | None) -> list[PurePath]:
    """Where relative logger paths may start: the run directory, then the log's folder."""
    return list(dict.fromkeys(base for base in (run_dir, log.parent) if base is not None))


def candidate_paths(hints: LoggerHints, bases: list[PurePath]) -> list[PurePath]:
    """Every place ``choose_logger_files`` may look, so a remote host can list them in one go."""
    return [base / candidate
            for candidate in [*_moved(hints.jsonl_paths()), *_moved(hints.tensorboard_paths())]
            for base in bases]


# How much of an announced absolute path names the run's own files: verl's
# ``<project>/<experiment>.jsonl`` and ``tensorboard_log/<project>/<experiment>``.
_RUN_TAIL = 3


def _moved(announced: list[PurePath]) -> list[PurePath]:
    """The announced paths, and for an absolute one its tails (``tensorboard_log/p/e``, ``p/e``)
    under the bases as well: a run directory copied off the box, or seen from a login node
    through another mount, keeps its own layout while the prefix the trainer printed is gone."""
    out: list[PurePath] = []
    for path in announced:
        out.append(path)
        if path.is_absolute():
            parts = path.parts[1:]
            out += [PurePath(*parts[-n:]) for n in range(min(_RUN_TAIL, len(parts) - 1), 1, -1)]
    return list(dict.fromkeys(out))


def choose_logger_files(hints: LoggerHints, bases: list[PurePath],
                        is_file: Callable[[PurePath], bool],
                        has_events: Callable[[PurePath], bool]) -> LoggerFiles:
    """The first JSONL and event directory the hints name that exist under a base.

    Where files exist is asked of ``is_file``/``has_events``: this machine's
    disk, or a listing fetched from the training box.
    """
    notes: list[str] = []
    jsonl = _first(hints, "file", _moved(hints.jsonl_paths()), bases, is_file, notes,
                   "a file-logger JSONL")
    tensorboard = _first(hints, "tensorboard", _moved(hints.tensorboard_paths()), bases, has_events,
                         notes, "TensorBoard event files")
    return LoggerFiles(jsonl, tensorboard, tuple(notes))


def _first(hints: LoggerHints, logger: str, candidates: list[PurePath], bases: list[PurePath],
           usable: Callable[[PurePath], bool], notes: list[str], what: str) -> PurePath | None:
    """The first candidate that exists under a base; a note says what was merged or missed."""
    if hints.uses(logger) is False:
        return None
    for candidate in candidates:
        for base in bases:
            path = base / candidate
            if usable(path):
                notes.append(f"merging exact values from {path}")
                return path
    if hints.uses(logger):
        looked = " or ".join(str(base / candidate) for candidate in candidates for base in bases)
        missing = f"none was found at {looked}" if looked else "the log does not say where"
        notes.append(f"the run writes {what}, but {missing}; values come from the console log")
    return None


def sniff_log(log: Path) -> str:
    """The head and tail of the log, where verl prints its config and announcements."""
    try:
        with open_regular(log) as handle:
            head = handle.read(SNIFF_BYTES)
            size = os.fstat(handle.fileno()).st_size
            if size <= SNIFF_BYTES:
                return head.decode("utf-8", "replace")
            handle.seek(max(SNIFF_BYTES, size - SNIFF_BYTES))
            return (head + b"\n" + handle.read(SNIFF_BYTES)).decode("utf-8", "replace")
    except OSError:
        return ""
