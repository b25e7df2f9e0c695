"""Why the box cannot find a path: missing, under something that is not a directory, or
under a directory the account may not enter; or there, but a FIFO, a device or a socket,
which the opening does not read (reading one would hang or never end).

``[ -e PATH ]`` on the box says only "no" for all three, and a user told "no such
file" about a run behind a directory they may not enter looks for a typo that is
not there. Asked only after the opening command said the path is missing (it costs
a round trip then, never on the way to a run that opens), the box walks up from
the path to the first ancestor that exists and says what that ancestor is: not a
directory (ENOTDIR), a directory it may not search (EACCES), or a directory
without the next name in it (ENOENT).
"""

from __future__ import annotations

import shlex

from tui.regular_file import BLOCK_DEVICE, CHARACTER_DEVICE, FIFO, SOCKET

# $1: the path. Prints FIFO, CHAR, BLOCK or SOCKET for a path that is there but is no regular
# file (``test`` follows a symlink, as ``stat`` does; nothing is opened), else MISSING, NOTDIR or
# DENIED (read-only: tests, dirname).
_WHY = r"""p=$1
if [ -p "$p" ]; then echo FIFO; exit 0; fi
if [ -c "$p" ]; then echo CHAR; exit 0; fi
if [ -b "$p" ]; then echo BLOCK; exit 0; fi
if [ -S "$p" ]; then echo SOCKET; exit 0; fi
while :; do
  case $p in */) p=${p%/}; continue;; esac
  d=$(dirname -- "$p") || break
  [ "$d" = "$p" ] && break
  if [ -e "$d" ]; then
    if [ ! -d "$d" ]; then echo NOTDIR; elif [ ! -x "$d" ]; then echo DENIED; else echo MISSING; fi
    exit 0
  fi
  p=$d
done
echo MISSING
"""

_SAID = {"NOTDIR": "not a directory", "DENIED": "permission denied",
         # In the words a local path of the kind is refused in (tui.regular_file).
         **{answer: f"is {kind}, not a regular file" for answer, kind in
            (("FIFO", FIFO), ("CHAR", CHARACTER_DEVICE), ("BLOCK", BLOCK_DEVICE), ("SOCKET", SOCKET))}}


def why_command(path: str) -> str:
    """The command that asks the box why ``path`` cannot be found."""
    return f"set -- {shlex.quote(path)}\n{_WHY}"


def reason(answer: str) -> str:
    """What to tell the user, from ``why_command``'s answer (anything unknown: missing)."""
    return _SAID.get(answer.strip(), "no such file or directory")
