"""The findings a user acknowledged on one run, kept across restarts.

A user who has looked at a warning (one slow step, an error the run lived
through) and muted it in the dashboard expects it to stay muted when the
dashboard is opened again tomorrow, and ``rlwatch check`` on the same run to
agree. So the muted rule ids are kept per run, each with the step up to which
its events were acknowledged (a later slow step warns again), as a small JSON
object under the user's state directory (platformdirs), one file per run named by a hash of how
the run is named (its path, ``host:/path``, job URL). Only this user reads it.
A file that cannot be read or written loses the mute, never the run: the
dashboard says so once and goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path


def mutes_dir() -> Path:
    """Where every run's muted rules are kept (platformdirs' user state dir)."""
    from platformdirs import user_state_path

    return user_state_path("rlwatch") / "muted"


class RunMutes:
    """The muted rule ids of one run, read once and written on every change."""

    def __init__(self, run: str, directory: Path | None = None) -> None:
        name = hashlib.sha256(run.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        self.path = (directory if directory is not None else mutes_dir()) / f"{name}.json"
        self.run = run

    def load(self) -> dict[str, int | None]:
        """The rules muted on this run, each with the step its events are acknowledged up to
        (None: all); none where nothing, or nothing readable, is kept."""
        try:
            kept = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        rules = kept.get("muted") if isinstance(kept, dict) else None
        if not isinstance(rules, dict):
            return {}
        return {rule: upto for rule, upto in rules.items()
                if isinstance(rule, str) and (upto is None or type(upto) is int)}

    def save(self, muted: Mapping[str, int | None]) -> None:
        """Keep ``muted`` for this run (written whole, then renamed: never half a file).
        Raises OSError where the state directory cannot be written."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({"run": self.run, "muted": dict(sorted(muted.items()))}),
                           encoding="utf-8")
        os.replace(partial, self.path)
