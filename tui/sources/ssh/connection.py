"""One asyncssh connection per host, made the way the user's own ``ssh`` would make it.

asyncssh reads ``~/.ssh/config`` (Host aliases, HostName, User, Port,
IdentityFile, ProxyJump), talks to the agent, tries the default keys and
checks ``~/.ssh/known_hosts``. rlwatch adds only the host-key policy of
OpenSSH's ``StrictHostKeyChecking``: an unknown key is refused unless the user
passed ``--accept-new-host-key`` (then recorded, like ``accept-new``); a
changed key is always refused.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import asyncssh

from tui.durations import word_duration
from tui.sources.base import SourceError
from tui.sources.ssh.client_options import chosen
from tui.sources.ssh.target import RemoteTarget

# How long a login may take, and how often a quiet connection is checked (and how many checks
# may go unanswered), where the user's ssh_config does not say (``ConnectTimeout``,
# ``ServerAliveInterval``, ``ServerAliveCountMax``: where it does, its values, as for ssh).
CONNECT_TIMEOUT_S = 15.0
KEEPALIVE_S = 30
KEEPALIVE_COUNT = 4
# A dropped connection is tried again at once (a blip, a restarted sshd), then after pauses
# that double from a second up to this cap: a box back from a reboot is rejoined within the
# cap of its sshd answering, and a box down for hours costs one login attempt per cap.
RECONNECT_FIRST_S = 1.0
RECONNECT_CAP_S = 15.0


def reconnect_delay(failures: int, refused: bool = False) -> float:
    """The pause before the next login attempt after ``failures`` failed ones in a row
    (0 after none: at once). ``refused``: the last one found nothing listening (the box is
    up, its sshd is restarting), which costs the box nothing to ask again: a second at most,
    so that the sshd is rejoined within a second of listening again."""
    if failures <= 0:
        return 0.0
    delay = min(RECONNECT_CAP_S, RECONNECT_FIRST_S * 2 ** (failures - 1))
    return min(delay, RECONNECT_FIRST_S) if refused else delay


class Refused(SourceError):
    """Nothing listens on the host's SSH port (a connection refused): the host is up."""


def _ssh_dir() -> Path:
    return Path(os.path.expanduser("~")) / ".ssh"


@dataclass
class _SeenHost:
    """What known_hosts said about each host key asyncssh asked about."""

    asked: list[tuple[str, int | None, bool]] = field(default_factory=list)
    # The host keys known_hosts trusts for the host asked about last.
    known: list[asyncssh.SSHKey] = field(default_factory=list)


def _known_hosts_callback(path: Path, seen: _SeenHost) -> Callable[[str, str, int | None], Any]:
    """known_hosts for asyncssh, remembering whether each host had any entry at all."""
    def lookup(host: str, addr: str, port: int | None) -> Any:
        try:
            known = asyncssh.read_known_hosts(str(path)) if path.exists() else None
        except (OSError, ValueError):
            known = None
        if known is None:
            seen.asked.append((host, port, False))
            return [], [], [], [], [], [], []
        matched = known.match(host, addr, port)
        seen.asked.append((host, port, bool(matched[0] or matched[1] or matched[2])))
        seen.known = list(matched[0])
        return matched

    return lookup


def _timing(target: RemoteTarget, config: list[str]) -> tuple[float, dict[str, float]]:
    """How long the login may take, and the keep-alive options to connect with: those the
    user's ssh_config gives ``target``'s host (a box behind a slow VPN given ``ConnectTimeout
    60`` was cut off at 15 s), else rlwatch's. asyncssh reads the file as it will to connect,
    here without a key or the agent."""
    try:
        given = asyncssh.SSHClientConnectionOptions(
            config=config, host=target.host, port=target.port or (), username=target.user or (),
            known_hosts=None, client_keys=None, agent_path=None)
    except (OSError, asyncssh.Error, ValueError):  # said again, and better, by the connect itself
        return CONNECT_TIMEOUT_S, {"keepalive_interval": KEEPALIVE_S, "keepalive_count_max": KEEPALIVE_COUNT}
    timeout = float(given.connect_timeout) if given.connect_timeout else CONNECT_TIMEOUT_S
    if given.keepalive_interval:  # ServerAliveInterval set (0, its default, is off in asyncssh)
        return timeout, {}
    return timeout, {"keepalive_interval": KEEPALIVE_S, "keepalive_count_max": KEEPALIVE_COUNT}


def _known_hosts_name(host: str, port: int | None) -> str:
    return host if port in (None, 22) else f"[{host}]:{port}"


async def connect(target: RemoteTarget, accept_new_host_key: bool = False,
                  via: asyncssh.SSHClientConnection | None = None) -> asyncssh.SSHClientConnection:
    """An open asyncssh connection to ``target``'s host, or SourceError with what to do.

    ``via``: a connection to open this one through, as ``ssh -J`` does (a cluster's
    nodes seen from its login node or head); the host key is checked all the same."""
    known_hosts = _ssh_dir() / "known_hosts"
    options = chosen()
    config = _config_files()
    timeout, keepalive = _timing(target, config)
    passphrase: str | None = None
    for attempt in range(3):
        seen = _SeenHost()
        try:
            return await asyncssh.connect(
                target.host, port=target.port or (), username=target.user or (), config=config,
                known_hosts=_known_hosts_callback(known_hosts, seen), passphrase=passphrase,
                compression_algs=["zlib@openssh.com", "zlib", "none"], connect_timeout=timeout,
                **keepalive, tunnel=via or options.jump or (), client_keys=_client_keys(target, config))
        except asyncssh.HostKeyNotVerifiable:
            host, port, had_entry = seen.asked[-1] if seen.asked else (target.host, target.port, False)
            name = _known_hosts_name(host, port)
            if had_entry:
                raise SourceError(_changed(target, name, known_hosts)) from None
            if not accept_new_host_key or attempt > 0:
                raise SourceError(
                    f"{target.host}: the host key of {name} is unknown (not in {known_hosts}); "
                    f"connect once with `ssh {target.host}` to check and accept it, or pass "
                    "--accept-new-host-key") from None
            await _record_host_key(target, config, host, port, known_hosts, via)
        except asyncssh.KeyImportError as error:
            if "passphrase" not in str(error).lower() or passphrase is not None:
                raise SourceError(f"{target.host}: cannot use your key: {error}") from None
            passphrase = _ask_passphrase(target)
        except asyncssh.PermissionDenied:
            if passphrase is None and _encrypted_keys(config):
                passphrase = _ask_passphrase(target)
                continue
            user = f"{target.user}@" if target.user else ""
            raise SourceError(f"{user}{target.host}: authentication failed (no key was accepted; "
                              "is it in ssh-agent or ~/.ssh, and authorized on the box?)") from None
        except socket.gaierror:
            raise SourceError(f"{target.host}: cannot resolve the host name") from None
        except (asyncio.TimeoutError, TimeoutError):
            raise SourceError(f"{target.host}: no answer within {word_duration(timeout)} "
                              "(host down or unreachable?)") from None
        except ValueError as error:  # a private key that does not match its .pub, say
            raise SourceError(f"{target.host}: cannot use your key: {error}") from None
        except (OSError, asyncssh.Error) as error:
            if isinstance(error, (ConnectionResetError, asyncssh.ConnectionLost, asyncssh.KeyExchangeFailed)) \
                    and seen.known \
                    and (offered := await _other_kind_offered(target, config, seen.known, via)):
                # asyncssh asked only for the kinds known_hosts holds; the server has none of
                # them and hung up: OpenSSH calls this a changed identification, and so do we.
                host, port, _ = seen.asked[-1]
                name = _known_hosts_name(host, port)
                raise SourceError(_changed(target, name, known_hosts, offered)) from None
            # asyncio words a refused or unroutable connect "Connect call failed ('10.0.0.7', 22)";
            # ssh says what the system said ("Connection refused", "No route to host").
            reason = (os.strerror(error.errno) if isinstance(error, OSError) and error.errno
                      else getattr(error, "reason", None) or str(error))
            failed = Refused if isinstance(error, ConnectionRefusedError) else SourceError
            raise failed(f"{target.host}: cannot connect: {reason}") from None
    raise SourceError(f"{target.host}: cannot connect")


def _client_keys(target: RemoteTarget, config: list[str]) -> list[str] | tuple[()]:
    """The keys to offer (besides the agent's): as ``ssh -i`` has it, the ``-i`` keys first,
    then the ``IdentityFile`` keys ssh_config gives the host (those that exist: ssh skips a
    missing one too); without ``-i``, () lets asyncssh read the config's (or the default keys).
    asyncssh's ``client_keys`` replaces the config's, so a lab key named only in ssh_config
    stopped working for a user who added ``-i``."""
    from asyncssh.config import SSHClientConfig

    identities = chosen().identities
    if not identities:
        return ()
    host = SSHClientConfig.load(None, [Path(path) for path in config], False, False, False,
                                getpass.getuser(), target.user or (), target.host, target.port or ())
    named = [os.path.expanduser(str(path)) for path in cast(list, host.get("IdentityFile", []))]
    return list(dict.fromkeys([*identities, *(path for path in named if os.path.exists(path))]))


def _config_files() -> list[str]:
    """The ssh_config files to read: ``-F FILE`` when given (alone, as for ssh), else
    ``~/.ssh/config`` where there is one."""
    if (given := chosen().config_file) is not None:
        return [given]
    return [str(_ssh_dir() / "config")] if (_ssh_dir() / "config").exists() else []


def _changed(target: RemoteTarget, name: str, known_hosts: Path, offered: str | None = None) -> str:
    """OpenSSH's "REMOTE HOST IDENTIFICATION HAS CHANGED", in one line with what to do."""
    now = f" (it now offers only its {offered} key)" if offered else ""
    return (f"{target.host}: REMOTE HOST IDENTIFICATION HAS CHANGED: the host key of {name} is not "
            f"the one recorded in {known_hosts}{now}; refusing to connect (it may be a "
            f"man-in-the-middle). If the host was reinstalled, check its new key, remove the old "
            f"one with `ssh-keygen -R '{name}'` and connect once with ssh")


async def _other_kind_offered(target: RemoteTarget, config: list[str], known: list[asyncssh.SSHKey],
                              via: asyncssh.SSHClientConnection | None) -> str | None:
    """The kind of the host key the server offers when known_hosts has other kinds only
    (the key is fetched, nothing is logged in); None when it offers a known one, or none."""
    try:
        key = await asyncio.wait_for(asyncssh.get_server_host_key(
            target.host, port=target.port or (), config=config, tunnel=via or chosen().jump or ()),
            CONNECT_TIMEOUT_S)
    except (OSError, asyncssh.Error, asyncio.TimeoutError):
        return None
    if key is None or any(key.public_data == trusted.public_data for trusted in known):
        return None
    return key.get_algorithm()


def _encrypted_keys(config: list[str]) -> list[Path]:
    """Passphrase-protected keys asyncssh would have offered (the defaults and IdentityFile)."""
    paths = [Path(os.path.expanduser(identity)) for identity in chosen().identities]
    paths += [_ssh_dir() / name for name in ("id_ed25519", "id_ecdsa", "id_rsa")]
    for config_file in config:
        for line in Path(config_file).read_text(errors="replace").splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[0].lower() == "identityfile":
                paths.append(Path(os.path.expanduser(parts[1].strip().strip('"'))))
    locked = []
    for path in paths:
        try:
            asyncssh.read_private_key(str(path))
        except asyncssh.KeyImportError as error:
            if "passphrase" in str(error).lower():
                locked.append(path)
        except (OSError, ValueError):
            continue
    return locked


def _ask_passphrase(target: RemoteTarget) -> str:
    """Ask for the key's passphrase before the dashboard takes the terminal."""
    if not sys.stdin.isatty():
        raise SourceError(f"{target.host}: your key is passphrase-protected; add it to ssh-agent "
                          "(`ssh-add`) or run rlwatch in a terminal to type the passphrase")
    return getpass.getpass(f"Passphrase for your SSH key (to reach {target.host}): ")


async def _record_host_key(target: RemoteTarget, config: list[str], host: str, port: int | None,
                           known_hosts: Path, via: asyncssh.SSHClientConnection | None = None) -> None:
    """``--accept-new-host-key``: fetch the unknown key (no login) and append it to known_hosts;
    through ``via`` where the host is reached through a jump host (a compute node)."""
    key = await asyncssh.get_server_host_key(target.host, port=target.port or (), config=config,
                                             tunnel=via or chosen().jump or ())
    if key is None:
        raise SourceError(f"{target.host}: the server offered no host key")
    known_hosts.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    line = f"{_known_hosts_name(host, port)} {key.export_public_key('openssh').decode().strip()}\n"
    with open(known_hosts, "a") as handle:
        handle.write(line)
    print(f"rlwatch: recorded the host key of {_known_hosts_name(host, port)} in {known_hosts}",
          file=sys.stderr)
