"""Suite-wide setup.

hypothesis is imported here, at collection, rather than by its pytest plugin at
the session's end: CPython 3.11's AST builder keeps one recursion counter per
interpreter, which threads compiling at once can leave off by a few
(python/cpython#106905); the next parse then fails with "AST constructor
recursion depth mismatch", and a run of only the SSH tests ended in that
error instead of its summary.
"""

import hypothesis  # noqa: F401
