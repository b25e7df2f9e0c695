"""What the user typed, as a remote target: ``[user@]host:/path``, ``host:rel/path``, ``ssh://…``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# A path may hold any byte but NUL, newlines included (DOTALL).
_URL = re.compile(r"^ssh://(?:(?P<user>[^@/]+)@)?(?P<host>\[[^\]]+\]|[^:/]+)(?::(?P<port>\d+))?(?P<path>/.*)?$",
                  re.DOTALL)
_SCP = re.compile(r"^(?:(?P<user>[^@/:]+)@)?(?P<host>[A-Za-z0-9._-]+):(?P<path>.*)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class RemoteTarget:
    """A run on another machine. ``path`` is as typed: absolute, or relative to the remote home."""

    host: str
    path: str
    user: str | None = None
    port: int | None = None

    @property
    def label(self) -> str:
        """How the UI names it: ``host:/path``."""
        return f"{self.host}:{self.path}"


def parse_target(text: str) -> RemoteTarget | None:
    """A remote target, or None when ``text`` names a local path.

    A path that exists here stays local even if it contains a colon; a
    Windows-style drive letter (``C:``) is not a host.
    """
    url = _URL.match(text)
    if url:
        path = url.group("path") or "."
        return RemoteTarget(url.group("host").strip("[]"), path, url.group("user"),
                            int(url.group("port")) if url.group("port") else None)
    scp = _SCP.match(text)
    if scp is None or Path(text).exists() or len(scp.group("host")) == 1:
        return None
    return RemoteTarget(scp.group("host"), scp.group("path") or ".", scp.group("user"))
