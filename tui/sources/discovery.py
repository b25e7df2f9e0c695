"""Finding the training log inside a run directory on this machine.

Users point rlwatch at a run directory; the log is the newest ``*.log``,
``*.out`` or ``*.txt`` that contains verl step lines. A run that has just
started has printed none yet, so the newest candidate is taken then, and the
choice is explained either way.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from tui.regular_file import open_regular
from tui.sources.base import SourceError

LOG_SUFFIXES = (".log", ".out", ".txt")
# How deep below the run directory to look (``logs/``, ``outputs/<date>/``).
MAX_DEPTH = 3
# Step lines are near the end of a long log and near the start of a young
# one; sniffing both ends finds them without reading gigabytes.
SNIFF_BYTES = 4 * 1024 * 1024
STEP_LINE = re.compile(rb"(?<![\w/])step:\d+ - [^\s:]+:")


@dataclass(frozen=True, slots=True)
class LogChoice:
    """The chosen log and why, for the one line rlwatch prints about it."""

    path: Path
    reason: str
    has_steps: bool = True


class NoLogFound(SourceError):
    """A run directory without any ``*.log``/``*.out``/``*.txt``: the run may still be
    known by its TensorBoard events or file-logger JSONL (``tui.sources.logger_run``)."""


def walk_files(directory: Path):
    """Every file under ``directory`` that discovery looks at (``MAX_DEPTH`` folders down,
    hidden folders skipped), shared by the log and the logger-file searches so that both
    look as deep."""
    base_depth = len(directory.parts)
    for root, dirs, files in os.walk(directory, onerror=lambda _error: None):
        if len(Path(root).parts) - base_depth >= MAX_DEPTH:
            dirs[:] = []
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            yield Path(root) / name


def candidates(directory: Path) -> list[Path]:
    """Log-like files under ``directory``, newest first."""
    found: list[tuple[float, Path]] = []
    for path in walk_files(directory):
        if path.name.endswith(LOG_SUFFIXES):
            try:
                info = path.stat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):  # a FIFO or device named *.log is no log: reading it hangs
                found.append((info.st_mtime, path))
    return [path for _, path in sorted(found, key=lambda item: item[0], reverse=True)]


def has_step_lines(path: Path) -> bool:
    """True if the head or tail of ``path`` holds a verl step line."""
    try:
        with open_regular(path) as handle:
            head = handle.read(SNIFF_BYTES)
            if STEP_LINE.search(head):
                return True
            size = os.fstat(handle.fileno()).st_size
            if size <= SNIFF_BYTES:
                return False
            handle.seek(max(SNIFF_BYTES, size - SNIFF_BYTES))
            return STEP_LINE.search(handle.read(SNIFF_BYTES)) is not None
    except OSError:
        return False


def find_training_log(directory: Path) -> LogChoice:
    """Pick the training log in a run directory, or raise SourceError."""
    if not os.access(directory, os.R_OK | os.X_OK):
        raise SourceError(f"{directory}: permission denied")
    files = candidates(directory)
    if not files:
        raise NoLogFound(
            f"{directory}: no *.log, *.out or *.txt file found; pass --log FILE to name the log"
        )
    for path in files:
        if has_step_lines(path):
            return LogChoice(path, f"newest of {len(files)} log file(s) with verl step lines")
    return LogChoice(files[0], f"newest of {len(files)} log file(s); none has step lines yet",
                     has_steps=False)
