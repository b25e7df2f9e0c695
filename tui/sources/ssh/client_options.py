"""The OpenSSH options a user gave on rlwatch's command line: ``-F``, ``-i``, ``-J``.

They mean what they mean to ``ssh``: ``-F FILE`` is the configuration file read
instead of ``~/.ssh/config``; ``-i IDENTITY`` a private key to offer first (besides the
agent's and the config's ``IdentityFile``); ``-J [user@]host[:port]`` the jump host (several, comma-separated, hop
after hop). Chosen once per command, for every connection it makes (a fleet's
hosts, a cluster's login node, a Ray head), so they are held here rather than
passed through every source; the nodes of a cluster are still reached through
their login node or head, which the jump host leads to.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """``-F``, ``-i`` (any number) and ``-J``, as given (None / empty: not given)."""

    config_file: str | None = None
    identities: tuple[str, ...] = ()
    jump: str | None = None


_chosen = ClientOptions()


def choose(options: ClientOptions) -> None:
    """Use ``options`` for every connection made from now on (the command line's)."""
    global _chosen
    _chosen = options


def chosen() -> ClientOptions:
    """The options every connection is made with."""
    return _chosen
