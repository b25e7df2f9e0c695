"""Finding a run's sample dump directories on this machine.

verl writes ``{step}.jsonl`` files into ``trainer.rollout_data_dir`` and
``trainer.validation_data_dir`` when they are set; their names are the
user's, so a directory under the run that holds such files is a dump
directory, and one whose name mentions validation holds validation samples.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tui.parsers.rollout_dumps import DUMP_NAME

MAX_DEPTH = 3


@dataclass(frozen=True, slots=True)
class DumpDir:
    """A directory of per-step dumps and the steps it has."""

    path: Path
    validation: bool
    steps: tuple[int, ...]

    def file_for(self, step: int) -> Path:
        """The dump file of ``step``."""
        return self.path / f"{step}.jsonl"


def find_dump_dirs(run_dir: Path) -> list[DumpDir]:
    """Dump directories under ``run_dir`` (validation ones first)."""
    found = []
    base = len(run_dir.parts)
    for root, dirs, files in os.walk(run_dir, onerror=lambda _error: None):
        if len(Path(root).parts) - base >= MAX_DEPTH:
            dirs[:] = []
        steps = sorted(int(m.group(1)) for m in map(DUMP_NAME.match, files) if m)
        if steps:
            path = Path(root)
            found.append(DumpDir(path, "val" in path.name.lower(), tuple(steps)))
    return sorted(found, key=lambda d: (not d.validation, str(d.path)))
