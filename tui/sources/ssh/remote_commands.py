"""Every shell script rlwatch runs on the training box, each built with ``shlex.quote``.

All of them only read. The follower is wrapped so that it dies with the SSH
channel: ``tail -F`` idles until the log grows, so it would not notice a
closed pipe; the script waits on stdin, which reaches EOF when the channel
closes (or the client dies), and then kills it.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

# The same sniff as local discovery (tui/sources/discovery.py): a verl step line.
STEP_LINE_ERE = r"(^|[^[:alnum:]_/])step:[0-9]+ - [^[:space:]:]+:"
SNIFF_BYTES = 4 * 1024 * 1024


def discover(path: str) -> str:
    """One round trip: is ``path`` a file (its size) or a directory (its candidate logs)?

    Prints ``FILE <size>``, ``MISSING``, ``DENIED``, or ``DIR`` followed by one
    ``<mtime> <has-steps> <path>`` record per candidate log (depth ≤ 3), each
    ended by a NUL, since a file name may hold a newline.
    """
    p = shlex.quote(path)
    sniff = (f"{{ head -c {SNIFF_BYTES} \"$f\"; tail -c {SNIFF_BYTES} \"$f\"; }} 2>/dev/null "
             f"| LC_ALL=C grep -aqE {shlex.quote(STEP_LINE_ERE)}")
    per_file = f"for f; do if {sniff}; then s=1; else s=0; fi; " \
               "printf '%s %s %s\\0' \"$(stat -c %Y -- \"$f\")\" \"$s\" \"$f\"; done"
    return (f"p={p}; "
            "if [ -f \"$p\" ]; then if [ -r \"$p\" ]; then echo FILE \"$(stat -c %s -- \"$p\")\"; "
            "else echo DENIED; fi; "
            "elif [ -d \"$p\" ]; then if [ -r \"$p\" ] && [ -x \"$p\" ]; then echo DIR; "
            "find \"$p\" -maxdepth 3 -type f \\( -name '*.log' -o -name '*.out' -o -name '*.txt' \\) "
            f"-exec sh -c {shlex.quote(per_file)} sh {{}} + 2>/dev/null; else echo DENIED; fi; "
            "else echo MISSING; fi")


def size(path: str) -> str:
    """The file's size in bytes."""
    return f"stat -c %s -- {shlex.quote(path)}"


def backfill(path: str, needles: Sequence[bytes], window: int = 1 << 20) -> str:
    """One round trip: ``RESUME <offset>`` — the end of the last whole line present now —
    then ``grep -b`` for the needles over the bytes before it: ``OFFSET:LINE`` per match.

    A line still being written is left to the follower, which starts at that
    offset, so it is read once and whole. Only the last ``window`` bytes are read
    to find it (``tail -c +N`` seeks), and the file once more by grep.
    """
    patterns = " ".join(f"-e {shlex.quote(n.decode())}" for n in needles)
    return (f"f={shlex.quote(path)}; s=$(stat -c %s -- \"$f\") || exit 3; "
            f"w=$(( s < {int(window)} ? s : {int(window)} )); "
            "win() { tail -c +$(( s - w + 1 )) -- \"$f\" | head -c \"$w\"; }; "
            "if [ \"$s\" -eq 0 ] || [ \"$(win | tail -c 1 | od -An -tx1 | tr -d ' \\n')\" = 0a ]; "
            "then r=$s; else o=$(win | LC_ALL=C grep -a -b '' | tail -n 1 | cut -d: -f1); "
            "r=$(( s - w + o )); fi; echo \"RESUME $r\"; "
            f"head -c \"$r\" -- \"$f\" | LC_ALL=C grep -a -b -F {patterns}")


def read_range(path: str, start: int, end: int) -> str:
    """The bytes ``[start, end)``."""
    return (f"tail -c +{int(start) + 1} -- {shlex.quote(path)} 2>/dev/null "
            f"| head -c {max(0, int(end) - int(start))}")


def follow(path: str, start: int) -> str:
    """Stream from ``start`` as the log grows (``tail -F``: across rotation and truncation)."""
    return (f"tail -c +{int(start) + 1} -F -- {shlex.quote(path)} & t=$!; "
            "cat >/dev/null; kill $t 2>/dev/null")
