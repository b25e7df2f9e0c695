"""Every shell script rlwatch runs on the training box, each built with ``shlex.quote``.

All of them only read. Every path they hand a tool goes through ``operand`` first:
quoting stops a path from becoming a command, not from being read as an option,
and ``find`` reads a starting point ``-delete`` as its action (a directory of
that name once emptied a user's home) and ignores ``--``.

Scripts that start several processes or loop run
under ``sh -c`` with the log's path as ``$1``, so they mean the same whatever
the user's login shell is (zsh, say, does not split ``$cuts`` into words).
The follower and the backfill are wrapped so that they die with the SSH
channel: ``tail -F`` idles until the log grows and a buffered grep writes
nothing until its piece ends, so neither would notice a closed pipe; a
watcher waits on stdin, which reaches EOF when the channel closes (or the
client dies), and then ends them.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from tui.sources.grep_filter import DD_CAN_CUT, piece_command
from tui.sources.ssh.box_clock import CLOCK_LINE, STAMP
from tui.sources.ssh.remote_identity import CHECK, HEAD_OF_SIZE, IDENT_LINE, IDENTIFY

# The same sniff as local discovery (tui/sources/discovery.py): a verl step line.
STEP_LINE_ERE = r"(^|[^[:alnum:]_/])step:[0-9]+ - [^[:space:]:]+:"
SNIFF_BYTES = 4 * 1024 * 1024
# How far back from the end the box looks for the last whole line.
_WINDOW = 1 << 20
# What a piece's grep output may reach while it waits for the pieces before it
# to be sent (each piece but the first is held in memory by dd until then).
_PIECE_BUFFER = "16M"

# $1: the log, $2: where to start, $3: how many first bytes identify it (none: remote_identity's
# default). Prints CLOCK <size> <mtime> <box now> (box_clock), IDENT … (remote_identity),
# RESUME <end of the last whole line>, CUTS <line starts>..., then (while the questions asked
# beside it are answered on stderr: ANSWER <status> <n> and the n bytes of each) every piece's
# grep -b output followed by END <grep's status>, piece after piece, then REST <n> and the n bytes
# from RESUME to the size seen at the start (the line still being written); then a CLOCK
# line again and, from that size on, what ``tail -F`` sends, for a reader that follows.
_BACKFILL = r"""f=$1 a=$2 w=@WINDOW@
@STAMP@@IDENTIFY@stamp "$f"; s=$clk_s
case $s in ''|*[!0-9]*) exit 3;; esac
@CLOCK_LINE@
id_n=${3:-@HEAD_OF_SIZE@}; ident "$f" "$id_n"; @IDENT_LINE@
[ "$s" -lt "$w" ] && w=$s
win() { tail -c +$((s - w + 1)) -- "$f" | head -c "$w"; }
if [ "$s" -eq 0 ] || [ "$(win | tail -c 1 | od -An -tx1 | tr -d ' \n')" = 0a ]; then r=$s
else o=$(win | LC_ALL=C grep -a -b '' | tail -n 1 | cut -d: -f1); r=$((s - w + o)); fi
echo "RESUME $r"
k=$(nproc 2>/dev/null || echo 1); [ "$k" -gt 8 ] && k=8
{ @DD_CAN_CUT@ && dd if=/dev/null of=/dev/null iflag=fullblock 2>/dev/null; } || k=1
m=$(((r - a) / @CHUNK@)); [ "$m" -lt "$k" ] && k=$m
c= i=1
while [ "$i" -lt "$k" ]; do
  b=$((a + (r - a) * 2 * i / (2 * k + 1)))
  n=$(tail -c +$((b + 1)) -- "$f" | head -c @WINDOW@ | head -n 1 | wc -c)
  [ "$n" -lt @WINDOW@ ] && c="$c $((b + n))"
  i=$((i + 1))
done
echo "CUTS$c"
@ASKS@exec 3<&0
{ cat <&3 >/dev/null; kill 0; } >/dev/null 2>&1 &
piece() {
  if [ -n "$2" ]; then @PIECE_TO_END_OF_CUT@
  else @PIECE_TO_EOF@; fi
  echo "END $?"
}
pieces() {
  if [ $# -gt 1 ]; then
    x=$1 y=$2; shift
    pieces "$@" | dd bs=@BUFFER@ iflag=fullblock 2>/dev/null | { piece "$x" "$y"; cat; }
  else piece "$1" ""; fi
}
pieces "$a" $c 2>/dev/null
echo "REST $((s - r))"
tail -c +$((r + 1)) -- "$f" 2>/dev/null | head -c $((s - r))
stamp "$f"; @CLOCK_LINE@
LC_ALL=C; export LC_ALL
exec tail -c +$((s + 1)) -F -- "$f"
"""

# ``ask CMD``: CMD's answer, framed: ANSWER <status> <bytes> and its output (with stdin and
# stderr closed to it; in a subshell of its own, so that an ``exit`` or ``exec`` in it ends
# only it). Lengths count bytes: LC_ALL=C. The questions run in the background, their answers
# on stderr, beside the pieces (which send nothing there).
_ASK = r"""LC_ALL=C; export LC_ALL
ask() { q=$( (eval "$1") </dev/null 2>/dev/null; echo ".$?"); q_s=${q##*.} q=${q%.*}
  echo "ANSWER $q_s ${#q}"; printf '%s' "$q"; }
"""


_DISCOVER = r"""p=$1
if [ -f "$p" ] && [ -r "$p" ]; then echo FILE
@THEN@
elif [ -f "$p" ]; then echo DENIED
elif [ -d "$p" ]; then
  if [ -r "$p" ] && [ -x "$p" ]; then echo DIR
    find "$p" -maxdepth 3 \( -type f -o -type l \) \( -name '*.log' -o -name '*.out' -o -name '*.txt' \) -exec sh -c @PER_FILE@ sh {} + 2>/dev/null
    printf '\0CHOOSE\0'
@CHOSEN@
  else echo DENIED; fi
else echo MISSING; fi
"""


def discover(path: str, needles: Sequence[bytes] = (), chunk_bytes: int = 64 << 20,
             asks: Sequence[str] = ()) -> str:
    """One channel: is ``path`` a file or a directory (its candidate logs)?

    Prints ``FILE`` and then, given ``needles``, what ``backfill`` prints, so a
    file target's backfill runs in the same round trip; or ``MISSING``,
    ``DENIED``, or ``DIR`` followed by one ``<mtime> <has-steps> <path>`` record
    per candidate log (depth ≤ 3), each ended by a NUL, since a file name may
    hold a newline; the mtime is ``-`` where the box cannot give it. The listing
    ends with an empty record and ``CHOOSE``; given ``needles``, the script then
    reads the chosen log's path from stdin, one line, and backfills it as for a
    file (an empty line, or none: it ends). A directory's run is opened in one
    channel too, the choice staying with the client (``RemoteLog``).

    ``asks``: commands whose answers the backfill brings (``backfill``).
    """
    sniff = (f"{{ head -c {SNIFF_BYTES} \"$f\"; tail -c {SNIFF_BYTES} \"$f\"; }} 2>/dev/null "
             f"| LC_ALL=C grep -aqE {shlex.quote(STEP_LINE_ERE)}")
    # The mtime as box_clock's STAMP reads it (a box without stat -c), "-" where none can.
    mtime = ('m=$(stat -L -c %Y -- "$f" 2>/dev/null || date -r "$f" +%s 2>/dev/null '
             '|| stat -L -f %m -- "$f" 2>/dev/null); ')
    # A symlinked log (``latest.log -> run_0412.log``) is a candidate by what it names, as
    # locally: ``-type l`` lets it through find, ``-f`` drops a dangling one or a folder's.
    per_file = f"for f; do [ -f \"$f\" ] || continue; if {sniff}; then s=1; else s=0; fi; {mtime}" \
               "printf '%s %s %s\\0' \"${m:--}\" \"$s\" \"$f\"; done"
    then = f'set -- "$p" 0\n{_backfill_script(needles, chunk_bytes, asks)}' if needles else ":"
    chosen = (f'IFS= read -r p && [ -n "$p" ] && {{ set -- "$p" 0\n'
              f'{_backfill_script(needles, chunk_bytes, asks)}}}' if needles else ":")
    script = (_DISCOVER.replace("@PER_FILE@", shlex.quote(per_file)).replace("@THEN@", then)
              .replace("@CHOSEN@", chosen))
    return _sh(script, operand(path))


def backfill(path: str, needles: Sequence[bytes], chunk_bytes: int = 64 << 20, start: int = 0,
             asks: Sequence[str] = (), head_bytes: int | None = None) -> str:
    """The backfill of ``path`` from ``start``, in one channel and one round trip.

    Prints ``CLOCK <size> <mtime> <box now>`` first (see ``box_clock``: how old
    the lines are is read in the same round trip), then ``IDENT …``: which file it is
    (``remote_identity``; ``head_bytes``: of how many first bytes, those of a backfill
    before this one, which resumes it). Then ``RESUME <offset>``: the end of the last whole line present now (a
    line still being written is left to the follower, which starts there, so it
    is read once and whole; only the last MiB is read to find it). Then
    ``CUTS <offset>...``: line starts that split ``[start, RESUME)`` into one
    piece per CPU of the box (at most 8, each at least ``chunk_bytes``), since a
    multi-pattern grep is CPU-bound and training boxes have cores to spare.
    Meanwhile, on stderr, for each of ``asks`` (shell commands, which may name the log
    as ``"$f"``), ``ANSWER <status> <n>`` and the n bytes it printed: questions that
    would each cost a channel of their own (the log's logger hints, the accelerator
    probe) ride on this one (``answers``). Then every piece's ``grep -b`` output (offsets from the piece's start),
    each followed by ``END <grep's status>``, in order: all pieces run at once,
    the first streams, and each later one is held by ``dd`` until those before
    it are sent. The last piece is read by grep straight from the file and the
    others through a pipe, which costs grep half as much again per byte, so
    the last piece is 1.5 times as long as the others. Last, ``REST <n>`` and
    the n bytes from RESUME to the size seen at the start. Last, a ``CLOCK`` line
    and ``tail -F`` from that size on: a reader that follows reads on in the same
    channel, and one that does not closes it, which ends the tail (the watcher).

    All in one channel because each channel costs the box a login shell, and
    training boxes' shell start-up files (conda, pyenv, modules) can take a
    good part of a second.
    """
    identify = () if head_bytes is None else (str(int(head_bytes)),)
    return _sh(_backfill_script(needles, chunk_bytes, asks), operand(path), str(int(start)), *identify)


def _backfill_script(needles: Sequence[bytes], chunk_bytes: int, asks: Sequence[str] = ()) -> str:
    questions = "".join(f"ask {shlex.quote(ask)}; " for ask in asks)
    return (_BACKFILL.replace("@ASKS@", f"{_ASK}{{ {questions}}} >&2 &\n" if asks else "")
            .replace("@STAMP@", STAMP).replace("@CLOCK_LINE@", CLOCK_LINE)
            .replace("@IDENTIFY@", IDENTIFY).replace("@HEAD_OF_SIZE@", HEAD_OF_SIZE)
            .replace("@IDENT_LINE@", IDENT_LINE)
            .replace("@WINDOW@", str(_WINDOW)).replace("@CHUNK@", str(int(chunk_bytes)))
            .replace("@DD_CAN_CUT@", DD_CAN_CUT).replace("@BUFFER@", _PIECE_BUFFER)
            .replace("@PIECE_TO_END_OF_CUT@", piece_command('"$f"', needles, '"$1"', '"$(($2 - $1))"'))
            .replace("@PIECE_TO_EOF@", piece_command('"$f"', needles, '"$1"', None)))


def operand(path: str) -> str:
    """``path`` in a form no tool on the box can read as an option or an operator: a
    relative path gets ``./`` before it (``-delete`` → ``./-delete``, ``!`` → ``./!``),
    which names the same file; an absolute one already starts with ``/``.

    ``--`` is not enough: ``find`` takes its starting points before any option and reads
    the first word starting with ``-``, ``!`` or ``(`` as its expression, and not every
    tool on every box (BusyBox, a BSD) honours ``--``. Every builder here passes its paths
    through this, and tests/sources/ssh/test_hostile_paths.py runs each one on a real box
    with names that try."""
    return path if path.startswith(("/", "./", "../")) or path in (".", "..") else f"./{path}"


def _sh(script: str, *args: str) -> str:
    """``script`` run by ``sh`` with ``args`` as ``$1``…, whatever the login shell is."""
    return " ".join(["sh", "-c", shlex.quote(script), "sh", *(shlex.quote(arg) for arg in args)])


def read_range(path: str, start: int, end: int | None) -> str:
    """The bytes ``[start, end)``, or from ``start`` to the end of the file."""
    tail = f"tail -c +{int(start) + 1} -- {shlex.quote(operand(path))} 2>/dev/null"
    return tail if end is None else f"{tail} | head -c {max(0, int(end) - int(start))}"


def head_as_stamped(path: str, most: int) -> str:
    """The log's first ``most`` bytes, no more than the ``$s`` bytes it held when the backfill
    stamped it (asked beside the backfill, where ``s`` is set; ``path``: a shell word, ``"$f"``
    there): an answer whose length says whether it came whole (a shell's command
    substitution drops NUL bytes, and a log cut meanwhile is shorter)."""
    return f'head -c "$((s < {int(most)} ? s : {int(most)}))" < {path}'


def read_from(path: str, start: int) -> str:
    """A ``CLOCK`` line (``box_clock``), then the bytes from ``start`` to the end of the file:
    a read of what was written since also says when it was written, in the same round trip."""
    return _sh(f'{STAMP}stamp "$1"; {CLOCK_LINE}\ntail -c +{int(start) + 1} -- "$1" 2>/dev/null',
               operand(path))


def follow(path: str, start: int, identity: tuple[str, str, str] | None = None,
           changed: bool = False) -> str:
    """Stream from ``start`` as the log grows (``tail -F``: across rotation and truncation).

    Its first line is a ``CLOCK`` line (``box_clock``), printed before tail starts:
    the bytes a follower sends first were written before it started, perhaps long
    before (those written while the connection was down), so they must not count
    as written when they arrive. Then ``FROM <offset> [why]`` and ``IDENT …``
    (``remote_identity``): given the ``identity`` seen before, the box starts from 0
    instead when the log is no longer that file or was rewritten, and so it does when
    ``changed`` (tail said so), saying which. ``tail``'s notices on stderr are in English
    (``LC_ALL=C``), for the source to read.
    """
    return _sh(f'{STAMP}{IDENTIFY}stamp "$1"; {CLOCK_LINE}\n{CHECK}LC_ALL=C; export LC_ALL\n'
               'tail -c +$((o + 1)) -F -- "$1" & t=$!\n'
               'cat >/dev/null; kill $t 2>/dev/null', operand(path), str(int(start)),
               *(identity or ("", "", "")), "changed" if changed else "")


def list_files(roots: Sequence[str], depth: int, names: Sequence[str]) -> str:
    """``<size> <mtime> <path>`` of each file named like one of ``names`` (globs) under
    ``roots``, at most ``depth`` levels down, each record ended by a NUL. Missing roots are
    skipped. The modification time (seconds, with a fraction) says when a run that has
    only logger files last wrote; a last record ``NOW <box time>`` puts it on this
    machine's clock (``box_clock``: the box's clock may be off)."""
    tests = " -o ".join(f"-name {shlex.quote(name)}" for name in names)
    quoted = " ".join(shlex.quote(operand(root)) for root in roots)
    return (f"find {quoted} -maxdepth {int(depth)} -type f \\( {tests} \\) "
            f"-printf '%s %T@ %p\\0' 2>/dev/null; {_NOW}")


# The box's time, ending a listing, so that its mtimes can be put on this machine's clock.
_NOW = "printf 'NOW %s\\0' \"$(date +%s 2>/dev/null)\""


def list_logger_files(root: str, depth: int, jsonl_start: str, event_mark: str,
                      head_bytes: int = 256) -> str:
    """``<kind> <mtime> <path>`` of each JSONL and event file under ``root`` (at most
    ``depth`` levels down), NUL-ended: kind ``J`` for a JSONL whose first line matches the
    ERE ``jsonl_start`` (verl's file logger), ``-`` for another JSONL, ``E`` for an event
    file (``head_bytes``: how much of a JSONL's start is looked at); then ``NOW <box time>``.
    One round trip, however many dumps' JSONLs the directory holds."""
    per_file = (f'for f; do case $f in *.jsonl) if head -c {int(head_bytes)} -- "$f" | head -n 1 '
                '| LC_ALL=C grep -aqE "$0"; then k=J; else k=-; fi;; *) k=E;; esac; '
                'printf "%s %s %s\\0" "$k" "$(stat -c %Y -- "$f")" "$f"; done')
    return (f"find {shlex.quote(operand(root))} -maxdepth {int(depth)} -type f \\( -name '*.jsonl' "
            f"-o -name {shlex.quote(event_mark + '*')} \\) -exec sh -c {shlex.quote(per_file)} "
            f"{shlex.quote(jsonl_start)} {{}} + 2>/dev/null; {_NOW}")


def hint_lines(path: str, needles: Sequence[str], after: int = 3) -> str:
    """The lines of the log's head and tail (where verl prints its config and announcements)
    that hold one of ``needles``, with ``after`` lines of context for wrapped lists."""
    return hint_lines_of(shlex.quote(operand(path)), needles, after)


def hint_lines_of(path: str, needles: Sequence[str], after: int = 3) -> str:
    """``hint_lines`` of a path given as a shell word, already quoted (``"$f"`` in the
    backfill, where it is asked beside it)."""
    patterns = " ".join(f"-e {shlex.quote(needle)}" for needle in needles)
    return (f"{{ head -c {SNIFF_BYTES}; tail -c {SNIFF_BYTES}; }} < {path} 2>/dev/null "
            f"| LC_ALL=C grep -a -A {int(after)} -F {patterns}; true")
