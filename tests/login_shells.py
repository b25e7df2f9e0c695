"""Accounts whose login shells are the ones users really have, each printing at login.

One test sshd (``tests.sshd.Sshd`` with ``accounts``) lets a client in as
``rlw-bash``, ``rlw-dash``, ``rlw-zsh``, ``rlw-fish``, ``rlw-tcsh`` and
``rlw-busybox``, whose login shells are Debian's bash, dash, zsh, fish, tcsh
and BusyBox's ash. Each account's start-up files print what real boxes print
(a welcome line, a quota notice, ``stty: not a tty``) on stdout and on stderr,
and lines that look like rlwatch's own answers (``FILE``, a ``CLOCK`` line,
``file truncated``), so that a greeting taken for an answer shows. The bash
account's ``.bashrc`` also sources a site-wide file that prints, as a
cluster's ``/etc/bash.bashrc`` sources ``/etc/profile.d`` (a copy under the
test's directory: the machine's /etc is never touched; a bash run by sshd
reads ``.bashrc``, not ``BASH_ENV``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.sshd import Sshd

# What the start-up files print: a welcome and a notice, then lines shaped like answers.
GREETING_OUT = "Welcome to gpubox2 - quota: 80%% used\\nFILE\\nCLOCK 1 1 1\\nRESUME 0\\n"
GREETING_ERR = "stty: not a tty\\nfile truncated\\n"
SITE_LINE = "site notice from profile.d: maintenance on Sunday"

# Each account's login shell and the start-up files (relative to its home) that print.
_BUSYBOX_SH = "busybox-ash/ash"


def _posix(name: str) -> str:
    return f'printf "{name}: {GREETING_OUT}"; printf "{name}: {GREETING_ERR}" >&2\n'


STARTUP_FILES: dict[str, dict[str, str]] = {
    "bash": {".bashrc": _posix(".bashrc"), ".bash_profile": _posix(".bash_profile"),
             ".profile": _posix(".profile")},
    "dash": {".profile": _posix(".profile")},  # dash -c reads no start-up file
    "zsh": {".zshenv": _posix(".zshenv"), ".zshrc": _posix(".zshrc")},
    "fish": {".config/fish/config.fish": _posix("config.fish")},
    "tcsh": {".cshrc": f'printf "%s" ".cshrc: {GREETING_OUT}"\n'
                       f"/bin/sh -c 'printf \".cshrc: {GREETING_ERR}\" >&2'\n"},
    "busybox": {".profile": _posix(".profile")},  # ash -c reads none either
}


def _shell(name: str, directory: Path) -> str:
    if name == "busybox":  # BusyBox picks its applet by the name it is run as
        link = directory / _BUSYBOX_SH
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(shutil.which("busybox") or "/bin/busybox")
        return str(link)
    found = shutil.which(name)
    assert found, f"{name} is not installed (.ci/run installs it)"
    return found


SHELLS = tuple(STARTUP_FILES)


def chatty_box(directory: Path, public_key: str, path: str = "/usr/bin:/bin",
               env: dict[str, str] | None = None) -> Sshd:
    """An sshd (not started) with an account per shell of ``SHELLS``, each greeting at login;
    ``path``: the accounts' PATH, ``env``: more of their environment (sshd's SetEnv)."""
    site = directory / "profile.d" / "site.sh"
    site.parent.mkdir(parents=True, exist_ok=True)
    site.write_text(f'echo "{SITE_LINE}"\necho "{SITE_LINE} (stderr)" >&2\n')
    accounts = {f"rlw-{name}": _shell(name, directory) for name in SHELLS}
    box = Sshd(directory / "sshd", [public_key], accounts=accounts, env={"PATH": path, **(env or {})})
    for name, files in STARTUP_FILES.items():
        home = box.home_of(f"rlw-{name}")
        for relative, text in files.items():
            (home / relative).parent.mkdir(parents=True, exist_ok=True)
            (home / relative).write_text(f". {site}\n{text}" if relative == ".bashrc" else text)
    return box


def can_have_accounts() -> bool:
    """Whether accounts of their own can be made here (a mount namespace needs root)."""
    return os.geteuid() == 0 and shutil.which("unshare") is not None
