"""What importing a part of rlwatch drags in, asked of a fresh interpreter (as harlequin does)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterable


def packages_loaded_by(code: str, packages: Iterable[str]) -> list[str]:
    """Run ``code`` in a new Python; which of the top-level ``packages`` are then imported, sorted."""
    probe = (f"{code}\nimport sys\n"
             f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(packages)!r}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip())
