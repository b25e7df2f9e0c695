"""Which runs the words on the command line name: targets, ``@names`` from runs.toml, globs.

``~/.config/rlwatch/runs.toml`` (platformdirs' user config dir, beside
config.toml) names runs and groups of them::

    [runs]
    cola = "gpu1:/runs/cola"
    math = "/scratch/runs/math"

    [groups]
    sweep = ["cola", "math", "gpu2:/runs/sweep-*"]

``rlwatch @sweep`` watches a group, ``rlwatch @cola`` one named run; a word
without ``@`` is always a target as typed (a local run directory may be called
``cola`` too). A group's members are run names or targets.

A target whose path holds a glob (``gpu-host:/runs/*``, ``/runs/grpo-*``) is
every run it matches: on this machine with Python's glob, on a box by the
box's own shell (``tui.sources.ssh.remote_glob``: quoted, read-only), over the
fleet's shared connection.
"""

from __future__ import annotations

import glob
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui.regular_file import NotUtf8, read_utf8
from tui.sources.base import SourceError
from tui.sources.ssh.remote_glob import has_glob
from tui.sources.ssh.target import RemoteTarget, parse_target

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

if TYPE_CHECKING:
    from tui.sources.ssh.pool import ConnectionPool


class RunListError(Exception):
    """A word that names no run (an unknown ``@name``, a bad runs.toml); one line."""


@dataclass(frozen=True, slots=True)
class Wanted:
    """A run to watch: its target, and its name where runs.toml gives one."""

    target: str
    name: str | None = None


def runs_file() -> Path:
    """``runs.toml`` in rlwatch's config dir."""
    from tui.config import config_dir

    return config_dir() / "runs.toml"


def _read_runs_file(path: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    try:
        data = tomllib.loads(read_utf8(path))  # never a FIFO or a device: those would hang
    except FileNotFoundError:
        raise RunListError(f"{path}: no such file (it names the runs and groups @NAME means)") from None
    except OSError as error:
        raise RunListError(f"{path}: {error.strerror or error}") from None
    except (NotUtf8, tomllib.TOMLDecodeError) as error:
        raise RunListError(f"{path}: {error}") from None
    runs, groups = data.get("runs", {}), data.get("groups", {})
    if not isinstance(runs, dict) or not all(isinstance(v, str) for v in runs.values()):
        raise RunListError(f'{path}: [runs] must map names to targets in quotes (cola = "gpu1:/runs/cola")')
    if not isinstance(groups, dict) or not all(
            isinstance(v, list) and all(isinstance(m, str) for m in v) for v in groups.values()):
        raise RunListError(f'{path}: [groups] must map names to lists (sweep = ["cola", "math"])')
    return runs, groups


def wanted_runs(words: list[str], path: Path | None = None) -> list[Wanted]:
    """The runs ``words`` name, in order, each once (``@name``: from runs.toml at ``path``)."""
    found: list[Wanted] = []
    file: tuple[dict[str, str], dict[str, list[str]]] | None = None
    for word in words:
        if not word.startswith("@"):
            found.append(Wanted(word))
            continue
        if file is None:
            file = _read_runs_file(path or runs_file())
        runs, groups = file
        name = word[1:]
        if name in groups:
            found += [Wanted(runs[member], member) if member in runs else Wanted(member)
                      for member in groups[name]]
        elif name in runs:
            found.append(Wanted(runs[name], name))
        else:
            raise RunListError(f"{word}: no run or group of that name in {path or runs_file()}")
    return list(dict.fromkeys(found))


def is_fleet(words: list[str]) -> bool:
    """Whether the words name a fleet rather than one run: several, a group or a glob."""
    return len(words) > 1 or any(word.startswith("@") or globbed(Wanted(word)) for word in words)


def globbed(wanted: Wanted) -> bool:
    """Whether ``wanted`` is a glob to expand (a local path that exists is taken as it is)."""
    remote = parse_target(wanted.target)
    if remote is not None:
        return has_glob(remote.path)
    return has_glob(wanted.target) and not Path(wanted.target).expanduser().exists()


async def expand(wanted: Wanted, pool: ConnectionPool) -> list[Wanted]:
    """The runs a glob matches (SourceError when its box cannot be asked, or it matches none)."""
    remote = parse_target(wanted.target)
    if remote is None:
        paths = sorted(glob.glob(str(Path(wanted.target).expanduser())))
        targets = paths
    else:
        from tui.sources.ssh.remote_glob import expand as expand_remote

        targets = [_written(found) for found in await expand_remote(pool, remote)]
    if not targets:
        raise SourceError(f"{wanted.target}: matches nothing")
    return [Wanted(target, f"{wanted.name}/{_last(target)}" if wanted.name else None)
            for target in targets]


def _written(target: RemoteTarget) -> str:
    """A remote target as the user would type it again."""
    if target.port is not None:
        user = f"{target.user}@" if target.user else ""
        path = target.path if target.path.startswith("/") else f"/{target.path}"
        return f"ssh://{user}{target.host}:{target.port}{path}"
    return f"{target.user + '@' if target.user else ''}{target.host}:{target.path}"


def _last(target: str) -> str:
    return target.rstrip("/").rsplit("/", 1)[-1]
