"""Folders rlwatch makes on this machine for itself, and their removal however rlwatch ends.

The demo's replayed log and a remote run's mirrored event files live in
temporary folders. Normally each is removed when its owner is done with it;
after a hang-up the process ends without unwinding (see tui/cli/dashboard.py),
so every folder still alive is removed from this registry instead.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path

_alive: set[Path] = set()


def scratch_dir(prefix: str) -> tempfile.TemporaryDirectory:
    """A temporary folder (use it as a context manager, or keep it) that ``remove_all`` knows."""
    folder = tempfile.TemporaryDirectory(prefix=prefix)
    path = Path(folder.name)
    _alive.add(path)
    weakref.finalize(folder, _alive.discard, path)
    return folder


def remove_all() -> None:
    """Remove every scratch folder still alive (the process is about to end)."""
    for path in list(_alive):
        shutil.rmtree(path, ignore_errors=True)
        _alive.discard(path)
