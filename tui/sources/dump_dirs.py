"""Finding a run's sample dump directories, on this machine or in a remote listing.

verl writes ``{step}.jsonl`` files into ``trainer.rollout_data_dir`` and
``trainer.validation_data_dir`` when they are set; their names are the
user's, so a directory under the run that holds such files is a dump
directory, and one whose name mentions validation holds validation samples.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath

from tui.parsers.rollout_dumps import DUMP_NAME

# Folders below the run directory that are searched: rollout_dump/, outputs/x/val/, …
MAX_DEPTH = 3


@dataclass(frozen=True, slots=True)
class DumpDir:
    """A directory of per-step dumps and the steps it has."""

    path: PurePath
    validation: bool
    steps: tuple[int, ...]

    def file_for(self, step: int) -> PurePath:
        """The dump file of ``step``."""
        return self.path / f"{step}.jsonl"


def dump_dirs_in(files: Iterable[PurePath]) -> list[DumpDir]:
    """The dump directories among ``files`` (any listing of paths), validation ones first."""
    steps: dict[PurePath, list[int]] = defaultdict(list)
    for file in files:
        if match := DUMP_NAME.match(file.name):
            steps[file.parent].append(int(match.group(1)))
    found = [DumpDir(path, "val" in path.name.lower(), tuple(sorted(numbers)))
             for path, numbers in steps.items()]
    return sorted(found, key=lambda d: (not d.validation, str(d.path)))


def find_dump_dirs(run_dir: Path) -> list[DumpDir]:
    """Dump directories under ``run_dir`` on this machine, at most MAX_DEPTH folders down."""
    files = []
    base = len(run_dir.parts)
    for root, dirs, names in os.walk(run_dir, onerror=lambda _error: None):
        if len(Path(root).parts) - base >= MAX_DEPTH:
            dirs[:] = []
        files += [Path(root, name) for name in names]
    return dump_dirs_in(files)
