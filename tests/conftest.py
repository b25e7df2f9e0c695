"""Suite-wide setup.

hypothesis is imported here, at collection, rather than by its pytest plugin at
the session's end: CPython 3.11's AST builder keeps one recursion counter per
interpreter, which threads compiling at once can leave off by a few
(python/cpython#106905); the next parse then fails with "AST constructor
recursion depth mismatch", and a run of only the SSH tests ended in that
error instead of its summary.
"""

from __future__ import annotations

import hypothesis  # noqa: F401
import pytest


# Suites whose tests share one real cluster, started once by a session-scoped fixture: the
# suite runs on several pytest-xdist workers (pyproject's addopts), and each worker has its
# own session, so these are kept on one worker as a group (``--dist loadgroup``): one Ray
# head and one Slurm controller, not one per worker.
SHARED_CLUSTERS = ("ray", "slurm")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``last`` run after all others: each waits on something started earlier
    (a Slurm job's one-minute time limit), and the rest of the suite runs while it comes
    (on its worker, after the rest of its group; the other workers go on meanwhile). The
    tests of a shared cluster go to one worker."""
    items.sort(key=lambda item: item.get_closest_marker("last") is not None)
    for item in items:
        for cluster in SHARED_CLUSTERS:
            if cluster in item.path.parts:
                item.add_marker(pytest.mark.xdist_group(cluster))
