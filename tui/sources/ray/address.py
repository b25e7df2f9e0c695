"""Which Ray dashboard and job a target names.

* ``ray+http://HOST[:PORT][/JOB]`` (``ray+https://`` too): the Jobs API read directly;
  PORT defaults to 8265, Ray's dashboard port.
* ``ray://[user@]HEAD[:PORT][/JOB]``: the same API on the head's own 127.0.0.1:PORT
  (8265), reached through an SSH connection to HEAD (an ssh_config alias or a host;
  its SSH port and user come from ``~/.ssh/config`` as for every SSH target). PORT is
  the dashboard's, as in ``ray+http``: Ray's own ``ray://head:10001`` (the Ray Client
  port) is not the Jobs API.
* ``ray:`` or ``ray:JOB``: the dashboard Ray's CLI would use: ``RAY_API_SERVER_ADDRESS``,
  else ``RAY_ADDRESS`` (an ``http(s)://`` URL, as ``ray job submit`` takes it), else
  ``http://127.0.0.1:8265``, the local cluster's default.

JOB is a submission id (``raysubmit_…``, or the ``--submission-id`` given) or a
driver job id; without one, the newest running job is meant.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from tui.sources.base import SourceError
from tui.sources.ssh.target import RemoteTarget

DASHBOARD_PORT = 8265
_JOB = r"[A-Za-z0-9_.:-]+"
_HTTP = re.compile(rf"^ray\+(?P<scheme>https?)://(?P<host>\[[^\]]+\]|[^:/@\[]+)(?::(?P<port>\d+))?"
                   rf"(?:/(?P<job>{_JOB})?)?/?$")
_SSH = re.compile(rf"^ray://(?:(?P<user>[^@/]+)@)?(?P<host>\[[^\]]+\]|[^:/@\[]+)(?::(?P<port>\d+))?"
                  rf"(?:/(?P<job>{_JOB})?)?/?$")
_ENV = re.compile(rf"^ray:(?P<job>{_JOB})?$")
_URL = re.compile(r"^(?P<scheme>https?)://(?P<host>\[[^\]]+\]|[^:/@\[]+)(?::(?P<port>\d+))?/?$")
_ENV_NAMES = ("RAY_API_SERVER_ADDRESS", "RAY_ADDRESS")


@dataclass(frozen=True, slots=True)
class RayAddress:
    """A dashboard (``url``, or ``head`` to reach through SSH and its ``port`` there) and a job."""

    url: str | None            # http(s)://host:port when read directly
    head: RemoteTarget | None  # the SSH host whose 127.0.0.1:port is the dashboard
    port: int
    job: str | None

    @property
    def where(self) -> str:
        """How messages name the dashboard."""
        if self.head is not None:
            return f"ray://{self.head.host} (its port {self.port}, over SSH)"
        return self.url or "?"

    @property
    def host(self) -> str:
        """The head's host name (the URL's host, or the SSH host)."""
        if self.head is not None:
            return self.head.host
        match = _URL.match(self.url or "")
        return match.group("host").strip("[]") if match else ""


def is_ray_target(text: str) -> bool:
    """Whether ``text`` is meant as a Ray job (then ``parse_ray_target`` says if it is well formed)."""
    return text.startswith(("ray://", "ray+http://", "ray+https://")) or _ENV.match(text) is not None


def parse_ray_target(text: str, environ: Mapping[str, str] | None = None) -> RayAddress:
    """The dashboard and job ``text`` names (SourceError, one line, when it is not well formed)."""
    environ = os.environ if environ is None else environ
    if match := _HTTP.match(text):
        scheme = match.group("scheme")
        port = int(match.group("port") or DASHBOARD_PORT)
        return RayAddress(f"{scheme}://{match.group('host')}:{port}", None, port, match.group("job"))
    if match := _SSH.match(text):
        head = RemoteTarget(match.group("host").strip("[]"), ".", match.group("user"))
        return RayAddress(None, head, int(match.group("port") or DASHBOARD_PORT), match.group("job"))
    if match := _ENV.match(text):
        return _from_environment(environ, match.group("job"))
    raise SourceError(f"{text}: not a Ray job target; write ray+http://HOST:8265/JOB, "
                      "ray://[user@]HEAD/JOB (through SSH) or ray:JOB (RAY_ADDRESS)")


def _from_environment(environ: Mapping[str, str], job: str | None) -> RayAddress:
    for name in _ENV_NAMES:
        value = environ.get(name, "").strip()
        if not value:
            continue
        match = _URL.match(value)
        if match is None:
            raise SourceError(
                f"{name}={value} is not the dashboard's http(s)://HOST:PORT URL (a cluster or Ray "
                f"Client address is resolved by Ray itself, which rlwatch does not run); set {name}="
                f"http://HEAD:{DASHBOARD_PORT} or name it: ray+http://HEAD:{DASHBOARD_PORT}/JOB")
        port = int(match.group("port") or DASHBOARD_PORT)
        return RayAddress(f"{match.group('scheme')}://{match.group('host')}:{port}", None, port, job)
    return RayAddress(f"http://127.0.0.1:{DASHBOARD_PORT}", None, DASHBOARD_PORT, job)
