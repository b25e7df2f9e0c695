"""``rlwatch check`` against the breadth corpus: the verdict a careful human reads from each real log.

Every folder under tests/fixtures/logs holds real logs (copied from public
issues and committed files, or written by real trainers run for this project)
with an ``expected.toml`` written by reading the raw text: the run's state,
the exception line a crash ends on, the last step, the total and a few values.
The command is run as a user runs it, on the file as it is.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.corpus import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

LOGS = REPO / "tests" / "fixtures" / "logs"
# A verdict state and the exit status ``check`` gives it.
EXIT = {"crashed": 2}


def samples() -> list[tuple[Path, dict]]:
    """Every sample of every expected.toml, with the folder it lives in."""
    found = []
    for expected in sorted(LOGS.glob("**/expected.toml")):
        for sample in tomllib.loads(expected.read_text(encoding="utf-8")).get("sample", []):
            found.append((expected.parent, sample))
    return found


SAMPLES = samples()


def check(path: Path) -> tuple[int, dict | None, str]:
    done = subprocess.run([sys.executable, "-m", "tui", "check", str(path), "--json"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None, done.stderr


@pytest.mark.parametrize(("folder", "sample"), SAMPLES,
                         ids=[f"{folder.name}/{sample['file']}" for folder, sample in SAMPLES])
def test_the_verdict_is_what_a_reader_sees(folder: Path, sample: dict, tmp_path: Path):
    path = folder / sample["file"]
    # A log being looked at now was written just now: its age must not make it stalled.
    now = time.time()
    if os.access(path, os.W_OK):
        os.utime(path, (now, now))
    status, result, stderr = check(path)
    assert result is not None, f"no verdict (exit {status}): {stderr}"
    run = result["run"]
    state = sample["state"]
    if state == "running":
        # A live or cut-off log: no crash and no end; a stall depends on the clock.
        assert run["state"] in ("running", "stalled"), run
    else:
        assert run["state"] == state, (run, result["findings"])
    if state == "crashed":
        assert status == EXIT["crashed"]
        crash = next(f for f in result["findings"] if f["rule"] == "crash")
        said = sample.get("exception") or sample.get("crash_line")
        if said:
            assert said.strip() in crash["exception"] or crash["exception"] in said, \
                (said, crash["exception"])
    else:
        assert not [f for f in result["findings"] if f["rule"] == "crash"
                    and f["severity"] == "critical"], result["findings"]
    if "last_step" in sample:
        assert run["last_step"] == sample["last_step"]
    if "total_steps" in sample:
        assert run["total_steps"] == sample["total_steps"]
    for key, value in sample.get("values", {}).items():
        got = result["latest"].get(key)
        assert got is not None, f"{key} not read"
        if isinstance(value, float) and isinstance(got, float):
            assert math.isclose(got, value, rel_tol=1e-6, abs_tol=1e-9), key
        else:
            assert got == value, key
