"""A real tmux server on a socket of its own, driving the installed ``rlwatch`` as a user would.

Every test gets a fresh server (``tmux -L <unique>``), so nothing leaks into a
tmux the developer is running, and the server is killed however the test ends.
Commands run with an explicit environment: ``TERM``, ``COLORTERM``, the
locale and ``HOME`` are what each test says, never what the CI shell had.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

RLWATCH = Path(sys.executable).parent / "rlwatch"
T = TypeVar("T")

# What a test's command starts from; each test adds or overrides.
BASE_ENV = {"TERM": "tmux-256color", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}
# SGR colour parameters: foreground/background, 256-colour (5;N) or truecolor (2;R;G;B).
_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def poll(check: Callable[[], T], timeout: float, what: str) -> T:
    """Call ``check`` until it returns something truthy, for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.1)


class Tmux:
    """One detached session named ``t`` on a private server."""

    def __init__(self) -> None:
        self.socket = f"rlwatch-test-{uuid.uuid4().hex[:12]}"

    def __call__(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                              timeout=10)

    def start(self, args: list[str], env: Mapping[str, str | None], width: int = 80,
              height: int = 24, before: str = "") -> None:
        """Run ``rlwatch *args`` in a ``width``×``height`` pane. ``env`` entries with None are
        unset. The shell prints ``rlwatch-exited=N`` afterwards and keeps the pane open."""
        merged = {**BASE_ENV, **env}
        assignments = " ".join(f"{name}={shlex.quote(value)}" for name, value in merged.items()
                               if value is not None)
        command = (f"{before}env -i {assignments} {shlex.quote(str(RLWATCH))} "
                   f"{' '.join(shlex.quote(arg) for arg in args)}; echo rlwatch-exited=$?; sleep 60")
        done = self("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), command)
        assert done.returncode == 0, done.stderr

    def screen(self, colours: bool = False) -> str:
        """The visible pane; with ``colours``, with its SGR escape sequences (``capture-pane -e``)."""
        return self("capture-pane", "-p", *(["-e"] if colours else []), "-t", "t").stdout

    def lines(self) -> list[str]:
        return self.screen().splitlines()

    def display(self, fmt: str) -> str:
        """A tmux format evaluated for the session's pane (``#{pane_title}``…)."""
        return self("display-message", "-p", "-t", "t", fmt).stdout.rstrip("\n")

    def keys(self, *keys: str) -> None:
        self("send-keys", "-t", "t", *keys)

    def kill(self) -> None:
        self("kill-server")


@contextmanager
def tmux_session() -> Iterator[Tmux]:
    """A :class:`Tmux` whose server is always killed afterwards."""
    session = Tmux()
    try:
        yield session
    finally:
        session.kill()


def colour_codes(screen: str) -> list[tuple[str, ...]]:
    """Every colour an SGR sequence on ``screen`` sets, as ``("38", "5", "74")``,
    ``("48", "2", "23", "26", "31")`` or ``("93",)``."""
    found = []
    for match in _SGR.finditer(screen):
        params = match.group(1).split(";") if match.group(1) else ["0"]
        at = 0
        while at < len(params):
            code = params[at]
            if code in ("38", "48") and at + 1 < len(params):
                width = 3 if params[at + 1] == "5" else 5
                found.append(tuple(params[at:at + width]))
                at += width
                continue
            if code.isdigit() and (30 <= int(code) <= 37 or 40 <= int(code) <= 47
                                   or 90 <= int(code) <= 97 or 100 <= int(code) <= 107):
                found.append((code,))
            at += 1
    return found
