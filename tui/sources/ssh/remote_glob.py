"""A glob on a box (``gpu-host:/runs/grpo-*``), expanded by the box's own shell, read-only.

The pattern cannot be quoted whole (the shell would not expand it), nor sent as
typed (a path must never become a command). So each literal run of characters
is quoted with ``shlex.quote`` and only the glob's own ``*``, ``?`` and simple
bracket classes (``[0-9]``, ``[!a-c]``) stay bare: ``/runs/my dir/*`` is sent
as ``'/runs/my dir/'*``. The command only lists names (``printf``), one NUL
after each, so a name may hold any byte but NUL.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from tui.sources.base import SourceError
from tui.sources.ssh.target import RemoteTarget

if TYPE_CHECKING:
    from tui.sources.ssh.pool import ConnectionPool

# What a glob may leave bare: a star, a question mark, a bracket class of plain characters.
_GLOB = re.compile(r"\*|\?|\[!?[A-Za-z0-9_.-]+\]")


def has_glob(path: str) -> bool:
    """Whether ``path`` holds a glob the box would expand."""
    return _GLOB.search(path) is not None


def shell_glob(pattern: str) -> str:
    """``pattern`` as a shell word: its glob characters bare, everything else quoted."""
    parts, at = [], 0
    for match in _GLOB.finditer(pattern):
        if match.start() > at:
            parts.append(shlex.quote(pattern[at:match.start()]))
        parts.append(match.group())
        at = match.end()
    if at < len(pattern):
        parts.append(shlex.quote(pattern[at:]))
    return "".join(parts)


def expand_command(pattern: str) -> str:
    """The command listing what ``pattern`` matches on the box (nothing when nothing does:
    a shell leaves an unmatched glob as typed, and ``[ -e ]`` drops it)."""
    return f'for p in {shell_glob(pattern)}; do [ -e "$p" ] && printf "%s\\0" "$p"; done; true'


def matches(output: bytes) -> list[str]:
    """The paths in ``expand_command``'s output, sorted."""
    return sorted(path.decode("utf-8", "surrogateescape")
                  for path in output.split(b"\0") if path)


async def expand(pool: ConnectionPool, target: RemoteTarget) -> list[RemoteTarget]:
    """The runs ``target``'s glob names on its box (SourceError when the box cannot be asked)."""
    import asyncssh

    from tui.sources.ssh import box_shell

    connection = await pool.first(target)
    try:
        output = (await box_shell.run(connection, expand_command(target.path), target.host)).stdout
    except (OSError, asyncssh.Error) as error:
        raise SourceError(f"{target.host}: connection lost: {error}") from None
    return [RemoteTarget(target.host, path, target.user, target.port) for path in matches(output)]
