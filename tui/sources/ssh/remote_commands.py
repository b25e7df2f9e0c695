"""Every shell script rlwatch runs on the training box, each built with ``shlex.quote``.

All of them only read. The follower is wrapped so that it dies with the SSH
channel: ``tail -F`` idles until the log grows, so it would not notice a
closed pipe; the script waits on stdin, which reaches EOF when the channel
closes (or the client dies), and then kills it.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from tui.sources.grep_filter import DD_CAN_CUT, bounded, grep_stdin

# The same sniff as local discovery (tui/sources/discovery.py): a verl step line.
STEP_LINE_ERE = r"(^|[^[:alnum:]_/])step:[0-9]+ - [^[:space:]:]+:"
SNIFF_BYTES = 4 * 1024 * 1024


def discover(path: str, needles: Sequence[bytes] = (), chunk_bytes: int = 64 << 20) -> str:
    """One round trip: is ``path`` a file or a directory (its candidate logs)?

    Prints ``FILE`` and then what ``plan`` prints, so a file target's backfill
    starts in the same round trip; or ``MISSING``, ``DENIED``, or ``DIR``
    followed by one ``<mtime> <has-steps> <path>`` record per candidate log
    (depth ≤ 3), each ended by a NUL, since a file name may hold a newline.
    """
    p = shlex.quote(path)
    sniff = (f"{{ head -c {SNIFF_BYTES} \"$f\"; tail -c {SNIFF_BYTES} \"$f\"; }} 2>/dev/null "
             f"| LC_ALL=C grep -aqE {shlex.quote(STEP_LINE_ERE)}")
    per_file = f"for f; do if {sniff}; then s=1; else s=0; fi; " \
               "printf '%s %s %s\\0' \"$(stat -c %Y -- \"$f\")\" \"$s\" \"$f\"; done"
    return (f"p={p}; "
            "if [ -f \"$p\" ]; then if [ -r \"$p\" ]; then echo FILE; "
            f"{_plan_script('$p', needles, chunk_bytes)}; else echo DENIED; fi; "
            "elif [ -d \"$p\" ]; then if [ -r \"$p\" ] && [ -x \"$p\" ]; then echo DIR; "
            "find \"$p\" -maxdepth 3 -type f \\( -name '*.log' -o -name '*.out' -o -name '*.txt' \\) "
            f"-exec sh -c {shlex.quote(per_file)} sh {{}} + 2>/dev/null; else echo DENIED; fi; "
            "else echo MISSING; fi")


def plan(path: str, needles: Sequence[bytes] = (), chunk_bytes: int = 64 << 20, start: int = 0) -> str:
    """How to backfill ``path`` from ``start``: ``RESUME <offset>`` then ``CUTS <offset>...``,
    then the last piece's ``grep -b`` output (``grep_piece``) when ``needles`` are given.

    RESUME is the end of the last whole line present now: a line still being
    written is left to the follower, which starts there, so it is read once and
    whole. Only the last MiB is read to find it (``tail -c +N`` seeks). CUTS
    split ``[start, RESUME)`` at line starts into one piece per CPU of the box (at
    most 8, each at least ``chunk_bytes``), so that several greps filter the
    log at once: a multi-pattern grep is CPU-bound, and training boxes have
    cores to spare. The last piece is read by grep straight from the file and
    the others through a pipe, which costs grep half as much again per byte,
    so the last piece is made 1.5 times as long as the others. The last piece
    runs in the same channel, so the longest grep starts first and costs no
    round trip of its own.
    """
    return f"p={shlex.quote(path)}; {_plan_script('$p', needles, chunk_bytes, int(start))}"


def _plan_script(var: str, needles: Sequence[bytes], chunk_bytes: int, start: int = 0,
                 window: int = 1 << 20) -> str:
    return (f"f=\"{var}\"; a={int(start)}; s=$(stat -c %s -- \"$f\") || exit 3; "
            f"w=$(( s < {window} ? s : {window} )); "
            "win() { tail -c +$(( s - w + 1 )) -- \"$f\" | head -c \"$w\"; }; "
            "if [ \"$s\" -eq 0 ] || [ \"$(win | tail -c 1 | od -An -tx1 | tr -d ' \\n')\" = 0a ]; "
            "then r=$s; else o=$(win | LC_ALL=C grep -a -b '' | tail -n 1 | cut -d: -f1); "
            "r=$(( s - w + o )); fi; echo \"RESUME $r\"; "
            f"k=$(nproc 2>/dev/null || echo 1); [ \"$k\" -gt 8 ] && k=8; {DD_CAN_CUT} || k=1; "
            f"m=$(( (r - a) / {int(chunk_bytes)} )); [ \"$m\" -lt \"$k\" ] && k=$m; "
            "c=CUTS; i=1; while [ \"$i\" -lt \"$k\" ]; do b=$(( a + (r - a) * 2 * i / (2 * k + 1) )); "
            f"n=$(tail -c +$(( b + 1 )) -- \"$f\" | head -c {window} | head -n 1 | wc -c); "
            f"[ \"$n\" -lt {window} ] && c=\"$c $(( b + n ))\"; i=$(( i + 1 )); done; echo \"$c\""
            + (f"; for l in $c; do :; done; [ \"$l\" = CUTS ] && l=$a; "
               f"{{ dd bs=1 skip=\"$l\" count=0 2>/dev/null; {grep_stdin(needles)}; }} < \"$f\""
               if needles else ""))


def grep_piece_when_told(path: str, needles: Sequence[bytes]) -> str:
    """``grep_piece`` for bounds that come later, as a ``<start> <end>`` line on stdin.

    Opened while the box makes the plan, so a piece starts as soon as the plan
    reaches the client instead of a channel's setup later. Anything but two
    ascending numbers (or stdin closed: the piece was not needed) ends it.
    """
    return ("read s e || exit 0; case \"$s$e\" in ''|*[!0-9]*) exit 0;; esac; "
            "[ \"$e\" -gt \"$s\" ] || exit 0; "
            + bounded(shlex.quote(path), '"$s"', '"$(( e - s ))"') + " | " + grep_stdin(needles))


def read_range(path: str, start: int, end: int | None) -> str:
    """The bytes ``[start, end)``, or from ``start`` to the end of the file."""
    tail = f"tail -c +{int(start) + 1} -- {shlex.quote(path)} 2>/dev/null"
    return tail if end is None else f"{tail} | head -c {max(0, int(end) - int(start))}"


def follow(path: str, start: int) -> str:
    """Stream from ``start`` as the log grows (``tail -F``: across rotation and truncation)."""
    return (f"tail -c +{int(start) + 1} -F -- {shlex.quote(path)} & t=$!; "
            "cat >/dev/null; kill $t 2>/dev/null")


def list_files(roots: Sequence[str], depth: int, names: Sequence[str]) -> str:
    """``<size> <path>`` of each file named like one of ``names`` (globs) under ``roots``,
    at most ``depth`` levels down, each record ended by a NUL. Missing roots are skipped."""
    tests = " -o ".join(f"-name {shlex.quote(name)}" for name in names)
    quoted = " ".join(shlex.quote(root) for root in roots)
    return (f"find {quoted} -maxdepth {int(depth)} -type f \\( {tests} \\) "
            "-printf '%s %p\\0' 2>/dev/null; true")


def hint_lines(path: str, needles: Sequence[str], after: int = 3) -> str:
    """The lines of the log's head and tail (where verl prints its config and announcements)
    that hold one of ``needles``, with ``after`` lines of context for wrapped lists."""
    patterns = " ".join(f"-e {shlex.quote(needle)}" for needle in needles)
    return (f"{{ head -c {SNIFF_BYTES}; tail -c {SNIFF_BYTES}; }} < {shlex.quote(path)} 2>/dev/null "
            f"| LC_ALL=C grep -a -A {int(after)} -F {patterns}; true")
