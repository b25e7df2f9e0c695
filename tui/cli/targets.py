"""Turning what the user typed (a log file, a run directory, a JSONL, event files) into a source.

A run is read from its console log when it has one; a directory without one,
a verl file-logger JSONL and a directory of TensorBoard event files are runs
too, read from those files alone (``tui.sources.logger_run``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tui.parsers.log_scanner import NEEDLES
from tui.sources.base import LogSource, SourceError
from tui.sources.discovery import NoLogFound, find_training_log
from tui.sources.local_file import LocalFile
from tui.sources.logger_run import local_logger_run, local_run_instead_of, logger_dir_run
from tui.sources.ray.address import is_ray_target
from tui.sources.slurm.target import parse_slurm_target
from tui.sources.ssh.target import RemoteTarget, parse_target
from tui.sources.tensorboard_events import is_event_file

if TYPE_CHECKING:
    from tui.sources.ray.address import RayAddress
    from tui.sources.ssh.pool import ConnectionPool


@dataclass(frozen=True, slots=True)
class OpenedTarget:
    """A source ready to stream, and a line saying which log was chosen and why."""

    source: LogSource
    note: str | None


def open_target(target: str, log: str | None = None, accept_new_host_key: bool = False,
                *, pool: ConnectionPool | None = None) -> OpenedTarget:
    """Resolve ``target`` (file, run directory, ``[user@]host:path`` or ``slurm://login/JOBID``)
    and ``--log`` to a source.

    A remote source connects (and finds the log in a run directory, or the
    logger files of a run without one) in its ``connect()``; nothing touches
    the network here. A Ray job (``ray+http://``, ``ray://``, ``ray:``) is read through
    its cluster's Jobs API. ``pool``: a fleet's shared SSH connections (one per host),
    which a remote log then uses instead of a login of its own.
    """
    if is_ray_target(target):
        return _open_ray(target, log, accept_new_host_key, pool)
    slurm = parse_slurm_target(target)
    if slurm is not None:
        from tui.sources.slurm.job_log import SlurmJobLog

        if log is not None:
            raise SourceError(f"{target}: --log does not apply to a Slurm job (Slurm names its "
                              "output file, which is the log)")
        return OpenedTarget(SlurmJobLog(slurm, accept_new_host_key, pool=pool), None)
    remote = parse_target(target)
    if remote is not None:
        from tui.sources.ssh.remote_log import RemoteLog

        run_dir = None
        if log is not None:
            path = log if log.startswith("/") else f"{remote.path.rstrip('/')}/{log}"
            remote, run_dir = replace(remote, path=path), remote.path
        # A JSONL or event file named as the target is not grepped for console lines.
        name = remote.path.rstrip("/").rsplit("/", 1)[-1]
        needles = () if name.endswith(".jsonl") or is_event_file(name) else NEEDLES
        return OpenedTarget(RemoteLog(remote, needles, accept_new_host_key, run_dir=run_dir,
                                      pool=pool), None)
    try:
        return _open_local(Path(target).expanduser(), target, log)
    except PermissionError:
        raise SourceError(f"{target}: permission denied") from None
    except OSError as error:
        raise SourceError(f"{target}: {error.strerror or error}") from None


def target_host(target: str) -> str | None:
    """The host a target's run is read from (a box, a Slurm login node, a Ray head), or None
    for this machine; what a fleet's row names as the run's host."""
    if is_ray_target(target):
        ray = ray_address(target)
        return (ray.host or None) if ray is not None else None
    remote = pooled_target(target)
    return remote.host if remote is not None else None


def pooled_target(target: str) -> RemoteTarget | None:
    """The SSH host whose connection a fleet's pool shares for ``target`` (a box, a Slurm login
    node, the head of ``ray://``); None for a local run or a Ray job read over HTTP."""
    if is_ray_target(target):
        ray = ray_address(target)
        return ray.head if ray is not None else None
    slurm = parse_slurm_target(target)
    return slurm.login if slurm is not None else parse_target(target)


def ray_address(target: str) -> RayAddress | None:
    """The Ray dashboard and job ``target`` names; None for another form, or an address that
    cannot be read (which says so when the run is opened)."""
    if not is_ray_target(target):
        return None
    from tui.sources.ray.address import parse_ray_target

    try:
        return parse_ray_target(target)
    except SourceError:
        return None


def _open_ray(target: str, log: str | None, accept_new_host_key: bool,
              pool: ConnectionPool | None) -> OpenedTarget:
    """A Ray job: its driver log, read through the cluster's Jobs API (``ray://``: over the
    pool's connection to the head, where a fleet shares one)."""
    if log is not None:
        raise SourceError(f"{target}: --log does not apply to a Ray job (its log is the driver's)")
    from tui.sources.ray.address import parse_ray_target
    from tui.sources.ray.ray_job import RayJobLog

    return OpenedTarget(RayJobLog(parse_ray_target(target), accept_new_host_key, pool=pool), None)


def _open_local(path: Path, target: str, log: str | None) -> OpenedTarget:
    if log is not None:
        log_path = Path(log).expanduser()
        if not log_path.is_absolute() and path.is_dir():
            log_path = path / log_path
        # --log may name another experiment's JSONL or event directory, too.
        if log_path.exists() and (run := local_logger_run(log_path)) is not None:
            return OpenedTarget(*run)
        return OpenedTarget(LocalFile(log_path, prefilter=NEEDLES), None)
    if path.is_dir():
        try:
            choice = find_training_log(path)
        except NoLogFound:
            return OpenedTarget(*logger_dir_run(path))
        if not choice.has_steps and (run := local_run_instead_of(choice.path, path)) is not None:
            return OpenedTarget(*run)
        return OpenedTarget(LocalFile(choice.path, prefilter=NEEDLES), f"watching {choice.path} ({choice.reason})")
    if not path.exists():
        raise SourceError(f"{target}: no such file or directory")
    if (run := local_logger_run(path)) is not None:
        return OpenedTarget(*run)
    return OpenedTarget(LocalFile(path, prefilter=NEEDLES), None)


def local_run_dir(target: str) -> Path | None:
    """The run directory ``target`` names on this machine, or None (a log file, a remote run)."""
    if is_ray_target(target) or parse_target(target) is not None:
        return None
    path = Path(target).expanduser()
    return path if path.is_dir() else None
