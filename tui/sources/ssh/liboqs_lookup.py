"""asyncssh's search for liboqs, made on a thread while rlwatch imports the rest.

Importing asyncssh looks for liboqs (post-quantum key exchange) with
``ctypes.util.find_library('oqs')`` and ``('liboqs')``; on Linux each runs
``ldconfig -p`` and, when that finds nothing, ``gcc`` and ``ld`` as
subprocesses: some 20 ms of a remote ``check`` whose whole start is under a
second, spent waiting. ``start`` runs the same two lookups on a thread at once,
while the main thread imports rlwatch's own modules, and has
``find_library`` answer those two names from them (the very same function's
answers, only earlier); once both are answered it is the standard library's
own again. Only single-run commands start it: a fleet forks its parse workers
before it has a second thread (``tui.session.parse_pool``).
"""

from __future__ import annotations

import ctypes.util
import sys
import threading
from collections.abc import Callable

# The names asyncssh (2.14 and later) passes to find_library, in its order, until one is found.
NAMES = ("oqs", "liboqs")


class _Lookups:
    """``find_library``'s answers for ``NAMES``, found on a thread as asyncssh would ask."""

    def __init__(self, find: Callable[[str], str | None]) -> None:
        self.find = find
        self.answers: dict[str, str | None] = {}
        self.left = set(NAMES)
        self.thread = threading.Thread(target=self._look, name="rlwatch-liboqs", daemon=True)

    def _look(self) -> None:
        for name in NAMES:
            if self.answers.setdefault(name, self.find(name)):
                return

    def answer(self, name: str) -> str | None:
        """What ``find_library(name)`` says: for a name of ``NAMES``, the thread's answer."""
        if name not in self.left:
            return self.find(name)
        self.thread.join()
        self.left.discard(name)
        found = self.answers.get(name) if name in self.answers else self.find(name)
        if found or not self.left:  # asyncssh asks no more: the standard library's own again
            ctypes.util.find_library = self.find  # type: ignore[assignment]
        return found


def start() -> None:
    """Begin the lookups, unless asyncssh is imported already (nothing would ask) or they are
    under way."""
    if "asyncssh" in sys.modules or isinstance(getattr(ctypes.util.find_library, "__self__", None),
                                               _Lookups):
        return
    lookups = _Lookups(ctypes.util.find_library)
    lookups.thread.start()
    ctypes.util.find_library = lookups.answer
