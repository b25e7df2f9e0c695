"""Which file a remote follower follows, asked of the box in round trips it makes anyway.

The remote half of ``tui.sources.follow_identity``. The backfill and every follower the
source starts (at a reconnect, after ``tail -F``'s notice) print, before any byte of the log::

    IDENT <device:inode> <n> <crc>

the log's device and inode (``stat -c``) and POSIX ``cksum``'s CRC of its first n bytes (n:
``HEAD_BYTES``, or the size when smaller), each ``-`` where the box cannot say. A follower
given the identity seen before checks it on the box and starts from 0 when the file is
another one, shrank below the offset, or no longer starts with the same bytes (emptied and
written past the offset while the connection was down), saying so first (and, told that
``tail -F`` noticed a change, starts from 0 and says which change it was)::

    FROM <offset> [replaced|truncated]

No round trip is added, and none per poll: three forks on the box when a follower starts
(``stat``, ``head``, ``cksum``). While a follower runs, ``tail -F``'s own notices say when
the file changed; rlwatch then starts another, which reads it from 0 (``remote_log``).
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.sources.follow_identity import HEAD_BYTES

# POSIX sh: ``ident FILE N`` sets id_f (device:inode) and id_h (cksum's CRC of the first N
# bytes), each empty where the box cannot say (BusyBox without stat -c or cksum).
IDENTIFY = r"""ident() {
  id_f=$(stat -L -c %d:%i -- "$1" 2>/dev/null)
  id_h=$(head -c "$2" -- "$1" 2>/dev/null | cksum 2>/dev/null) || id_h=
  id_h=${id_h%% *}
}
"""
# How many first bytes identify a log of size $s.
HEAD_OF_SIZE = f"$((s < {HEAD_BYTES} ? s : {HEAD_BYTES}))"
# The line, once ``ident`` has run with id_n bytes.
IDENT_LINE = 'echo "IDENT ${id_f:--} $id_n ${id_h:--}"'
# After ``stamp`` (s: the size) and with $2 the offset, $3 $4 $5 the identity seen before (none:
# $3 empty) and $6 non-empty when tail said the file changed: FROM, and the tail's start in o;
# then the file's identity now.
CHECK = (f"""s=${{clk_s:-0}} o=$2 w=
id_n=${{4:-{HEAD_OF_SIZE}}}; ident "$1" "$id_n"
if [ -n "$3" ] && [ "${{id_f:--}}" != "$3" ]; then w=replaced
elif [ -n "$6" ] || [ "$s" -lt "$o" ] || {{ [ -n "$3" ] && [ "${{id_h:--}}" != "$5" ]; }}; then w=truncated
fi
[ -z "$w" ] || o=0
echo "FROM $o $w"
[ "$id_n" -eq {HEAD_OF_SIZE} ] || {{ id_n={HEAD_OF_SIZE}; ident "$1" "$id_n"; }}
""" + IDENT_LINE + "\n")


@dataclass(frozen=True, slots=True)
class RemoteIdentity:
    """What an ``IDENT`` line said: the log's device and inode, and the CRC of its first
    ``head_bytes`` bytes (``-``: the box could not say)."""

    file: str
    head_bytes: int
    head_sum: str

    @classmethod
    def parse(cls, line: bytes) -> RemoteIdentity | None:
        """The ``IDENT`` line, or None if it is not one."""
        fields = line.decode("ascii", "replace").split()
        if len(fields) != 4 or fields[0] != "IDENT" or not fields[2].isdigit():
            return None
        return cls(fields[1], int(fields[2]), fields[3])

    def args(self) -> tuple[str, str, str]:
        """``$3 $4 $5`` of a follower that checks the file is still this one."""
        return self.file, str(self.head_bytes), self.head_sum

    def same_file(self, other: RemoteIdentity) -> str | None:
        """Whether ``other`` (seen later, of as many first bytes) is this file: ``"replaced"``,
        ``"truncated"`` (same file, other first bytes) or None."""
        if other.file != self.file:
            return "replaced"
        if other.head_bytes == self.head_bytes and other.head_sum != self.head_sum:
            return "truncated"
        return None


def parse_from(line: bytes) -> tuple[int, str | None] | None:
    """A ``FROM`` line: where the follower's tail starts, and why it starts from 0 when the file
    changed (``"replaced"``, ``"truncated"``); None if it is not one."""
    fields = line.decode("ascii", "replace").split()
    if len(fields) not in (2, 3) or fields[0] != "FROM" or not fields[1].isdigit():
        return None
    why = fields[2] if len(fields) == 3 and fields[2] in ("replaced", "truncated") else None
    return int(fields[1]), why
