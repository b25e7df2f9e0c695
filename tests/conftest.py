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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``last`` run after all others: each waits on something started earlier
    (a Slurm job's one-minute time limit), and the rest of the suite runs while it comes."""
    items.sort(key=lambda item: item.get_closest_marker("last") is not None)
