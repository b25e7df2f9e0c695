"""A remote log with a hole of NULs over 16 MiB (logrotate's copytruncate under a writer that keeps
its offset): the step after the hole is read over SSH as locally (tests/sources/test_local_file.py
has the local reads); the box's grep hands the hole and the line as one line."""

from __future__ import annotations

import json

import pytest

from tests.sources.test_local_file import copytruncated
from tests.support import rlwatch_as


@pytest.mark.parametrize("hole_mib", [17, 40])
def test_the_step_after_a_hole_is_read_over_ssh(ssh_world, tmp_path, hole_mib):
    home, _, _ = ssh_world
    log = tmp_path / "run.log"
    copytruncated(log, hole_mib)
    done = rlwatch_as(home, "check", "--json", f"gpu:{log}")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["run"]
    assert (run["steps"], run["last_step"]) == (2, 4)
