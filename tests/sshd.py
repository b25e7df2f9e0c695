"""A real OpenSSH server for the SSH tests, and a throwaway client home to reach it.

Each ``Sshd`` is an ``sshd -D -e`` on 127.0.0.1 with its own host key, its own
``sshd_config`` and an authorized key, all under a temporary directory; it
never reads the machine's /etc/ssh. ``ClientHome`` is a directory that stands
in for ``$HOME``: ``.ssh/config``, ``.ssh/known_hosts`` and a key pair, so the
code under test reads the user's OpenSSH setup the way it would on a laptop
while the real ``~/.ssh`` is never touched.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD_CANDIDATES = ("/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd")


def find_sshd() -> str | None:
    """The sshd binary, or None where OpenSSH's server is not installed."""
    found = shutil.which("sshd")
    if found:
        return found
    return next((path for path in SSHD_CANDIDATES if os.access(path, os.X_OK)), None)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def keygen(path: Path, passphrase: str = "", comment: str = "rlwatch-test", kind: str = "ed25519") -> str:
    """Create a key pair of ``kind`` (ed25519, rsa…) at ``path``; return the public key line."""
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", passphrase, "-C", comment,
                    "-f", str(path)], check=True, stdin=subprocess.DEVNULL)
    return path.with_name(path.name + ".pub").read_text().strip()


def _wait_for_port(port: int, process: subprocess.Popen, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited with status {process.returncode}: "
                               f"{process.stderr.read().decode(errors='replace') if process.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"sshd did not listen on port {port}")


@dataclass
class Sshd:
    """One sshd on 127.0.0.1:``port`` that lets ``authorized_keys`` in as the current user."""

    directory: Path
    authorized_keys: list[str]
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None
    # Variables every session gets (sshd's SetEnv), e.g. OMP_NUM_THREADS, which GNU nproc obeys.
    env: dict[str, str] = field(default_factory=dict)
    # Channels per connection (OpenSSH's default is 10; the tests allow more unless they say).
    max_sessions: int = 32
    # Whether sshd logs each session it starts (to ``log``), for tests that count them.
    log_sessions: bool = False
    # Accounts of their own (name -> login shell), each with a home under ``directory``: sshd
    # then runs in a mount namespace of its own where /etc/passwd lists them (the machine's
    # /etc is never written). They share this process's user id, so they need root.
    accounts: dict[str, str] = field(default_factory=dict)
    # An account's user id when not this process's (65534: an ordinary user, for EACCES).
    account_uids: dict[str, int] = field(default_factory=dict)
    # The kind of the server's one host key.
    host_key_kind: str = "ed25519"
    # A program to be the box's /bin/sh (BusyBox, say), bind-mounted over the machine's in
    # sshd's mount namespace (root, as for ``accounts``).
    bin_sh: str | None = None

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.host_key = self.directory / f"ssh_host_{self.host_key_kind}_key"
        if not self.host_key.exists():
            keygen(self.host_key, comment="rlwatch-test-host", kind=self.host_key_kind)
        (self.directory / "authorized_keys").write_text("\n".join(self.authorized_keys) + "\n")
        self.config = self.directory / "sshd_config"
        self.config.write_text(
            f"Port {self.port}\n"
            "ListenAddress 127.0.0.1\n"
            f"HostKey {self.host_key}\n"
            f"PidFile {self.directory / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {self.directory / 'authorized_keys'}\n"
            "UsePAM no\n"
            "StrictModes no\n"
            "PermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\n"
            "PubkeyAuthentication yes\n"
            "AllowTcpForwarding yes\n"
            "Compression yes\n"
            "MaxStartups 64\n"
            f"MaxSessions {self.max_sessions}\n"
            f"LogLevel {'VERBOSE' if self.log_sessions else 'ERROR'}\n"
            # One line: sshd takes only the first SetEnv directive.
            + (f"SetEnv {' '.join(f'{name}={value}' for name, value in self.env.items())}\n"
               if self.env else "")
        )

    @property
    def host_public_key(self) -> str:
        """The server's public key as ``type base64`` (no comment), as known_hosts lists it."""
        kind, blob, *_ = self.host_key.with_name(self.host_key.name + ".pub").read_text().split()
        return f"{kind} {blob}"

    def known_hosts_line(self) -> str:
        """The line OpenSSH's client writes for this server."""
        return f"[127.0.0.1]:{self.port} {self.host_public_key}"

    def home_of(self, account: str) -> Path:
        """The home directory of one of ``accounts`` (its start-up files go there)."""
        return self.directory / "homes" / account

    def _passwd(self) -> Path:
        """The machine's /etc/passwd plus a line per account, for sshd's namespace."""
        passwd = self.directory / "passwd"
        lines = [f"{name}:x:{self.account_uids.get(name, os.getuid())}:"
                 f"{self.account_uids.get(name, os.getgid())}:rlwatch test:{self.home_of(name)}:{shell}\n"
                 for name, shell in self.accounts.items()]
        for name in self.accounts:
            self.home_of(name).mkdir(parents=True, exist_ok=True)
        passwd.write_text(Path("/etc/passwd").read_text() + "".join(lines))
        return passwd

    def _command(self, logging: list[str]) -> list[str]:
        sshd = [find_sshd() or "sshd", "-D", *logging, "-f", str(self.config)]
        mounts = [(str(self._passwd()), "/etc/passwd")] if self.accounts else []
        if self.bin_sh is not None:
            mounts.append((self.bin_sh, os.path.realpath("/bin/sh")))
        if not mounts:
            return sshd
        # The bind mounts live and die with sshd's private mount namespace.
        script = " && ".join(f"mount --bind {shlex.quote(source)} {shlex.quote(target)}"
                             for source, target in mounts)
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                f'{script} && exec "$@"', "sh", *sshd]

    def start(self) -> Sshd:
        """Start (or restart) the server and wait until it accepts connections."""
        if os.geteuid() == 0:
            # sshd refuses to start as root without its privilege-separation
            # directory; the openssh-server package creates it at boot.
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        # -E: sshd's log to a file (its stderr pipe is never read; a chatty log would fill it).
        logging = ["-E", str(self.log)] if self.log_sessions else ["-e"]
        self.process = subprocess.Popen(self._command(logging), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _wait_for_port(self.port, self.process)
        return self

    @property
    def log(self) -> Path:
        """sshd's own log, written when ``log_sessions``."""
        return self.directory / "sshd.log"

    def sessions_started(self) -> list[str]:
        """The commands of the sessions (channels) this server started, one a line of its log
        (with ``log_sessions``): each one cost the box an sshd session and a login shell."""
        if not self.log.exists():
            return []
        return [line for line in self.log.read_text(errors="replace").splitlines()
                if "Starting session:" in line]

    def stop(self) -> None:
        """Stop the listener and every session it forked, as a reboot of the box would."""
        if self.process is None:
            return
        for pid in self.session_pids():
            _kill(pid)
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        self.process = None

    def session_pids(self) -> list[int]:
        """The per-connection sshd processes forked by this listener."""
        if self.process is None:
            return []
        return [pid for pid in _all_pids() if _parent(pid) == self.process.pid]


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _cmdlines_mentioning(text: str) -> list[tuple[int, bytes]]:
    """(pid, command line) of live processes but this one whose arguments contain ``text``."""
    found = []
    for pid in _all_pids():
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if text.encode() in raw and pid != os.getpid():
            found.append((pid, raw))
    return found


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes whose arguments contain ``text`` (e.g. a unique path)."""
    return [raw.replace(b"\0", b" ").decode(errors="replace") for _, raw in _cmdlines_mentioning(text)]


def pids_mentioning(text: str) -> list[int]:
    """Ids of live processes whose arguments contain ``text``: the ones a test started, when
    ``text`` is a directory of its own."""
    return [pid for pid, _ in _cmdlines_mentioning(text)]


@dataclass
class ClientHome:
    """A stand-in ``$HOME`` holding the client's ``.ssh`` directory."""

    path: Path

    def __post_init__(self) -> None:
        self.ssh = self.path / ".ssh"
        self.ssh.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.key = self.ssh / "id_ed25519"
        if not self.key.exists():
            keygen(self.key)
        self.public_key = self.key.with_name("id_ed25519.pub").read_text().strip()
        self.config = self.ssh / "config"
        self.known_hosts = self.ssh / "known_hosts"
        self.config.touch()
        self.known_hosts.touch()

    def add_host(self, alias: str, port: int, *, user: str | None = None, extra: str = "") -> None:
        """Append a ``Host`` block for ``alias`` pointing at 127.0.0.1:``port``."""
        lines = [f"Host {alias}", "  HostName 127.0.0.1", f"  Port {port}",
                 f"  IdentityFile {self.key}", "  IdentitiesOnly yes"]
        if user:
            lines.append(f"  User {user}")
        lines.extend(f"  {line}" for line in extra.splitlines() if line.strip())
        with open(self.config, "a") as handle:
            handle.write("\n".join(lines) + "\n")

    def trust(self, line: str) -> None:
        """Add a known_hosts line."""
        with open(self.known_hosts, "a") as handle:
            handle.write(line + "\n")

    def env(self) -> dict[str, str]:
        """An environment for a subprocess that should use this home (and no agent)."""
        env = {key: value for key, value in os.environ.items() if key != "SSH_AUTH_SOCK"}
        env["HOME"] = str(self.path)
        return env
