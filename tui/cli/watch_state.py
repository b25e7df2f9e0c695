"""What the headless watcher has told about each run, kept in the user's state directory.

A watcher left running for days gets restarted (a reboot, a systemd restart,
an upgrade); it must not page anyone again for a crash it already told. So
each run's ``Announced`` record is written, one small JSON file per run,
under platformdirs' user state directory (``~/.local/state/rlwatch/watch``),
each time something is told. A file that cannot be read is forgotten (the
run's news is told again, which is better than never); one that cannot be
written is said once on stderr and the watching goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tui.session.events import Announced


def watch_state_dir() -> Path:
    """Where the records live (``$XDG_STATE_HOME/rlwatch/watch`` on Linux)."""
    from platformdirs import user_state_path

    return user_state_path("rlwatch") / "watch"


class WatchState:
    """The records of the runs watched, one file each, named by the run's full target (two
    runs of one name on one host, ``/a/exp/train.log`` and ``/b/exp/train.log``, are two)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = watch_state_dir() if directory is None else directory

    def _path(self, where: str) -> Path:
        digest = hashlib.sha256(where.encode()).hexdigest()[:32]
        return self.directory / f"{digest}.json"

    def load(self, where: str) -> Announced:
        """What was told about the run at ``where`` before (nothing for a run never watched)."""
        try:
            data = json.loads(self._path(where).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return Announced()
        return Announced.from_json(data.get("announced") if isinstance(data, dict) else None)

    def save(self, run: str, host: str, where: str, announced: Announced) -> str | None:
        """Keep the record of the run at ``where`` (named ``run`` on ``host``, for whoever reads
        the file); a one-line problem, or None."""
        path = self._path(where)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f".{path.name}.{os.getpid()}")
            partial.write_text(json.dumps({"run": run, "host": host, "where": where, "announced": announced.to_json()}),
                               encoding="utf-8")
            os.replace(partial, path)  # a restart never reads half a record
        except OSError as error:
            return f"what was told is not kept: {path}: {error.strerror or error}"
        return None
