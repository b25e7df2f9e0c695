"""When the box last wrote a log, on this machine's clock.

Bytes that come over SSH arrive "now": a backfill hands on a log untouched
for two hours in its first second, and the time since the last step must not
be counted from then. So every command that reads the log also reads, on the
box and in the same round trip, the log's size and modification time and the
box's own time (``STAMP``), printed as one line::

    CLOCK <size> <mtime> <box now>

The box's clock may be hours off (no NTP on an air-gapped cluster), so its
mtime is translated by the offset between its ``date +%s`` and this
machine's time when the line was read: ``mtime + (here - box now)``. The
line's latency and the whole seconds of ``date`` make the log look at most
a second or two younger than it is, never older.

Every byte below ``size`` was written no later than ``mtime`` (the size is
read first), so only those are stamped with it; bytes past it were written
after the line was printed and are stamped when they arrive, which for a
follower is within milliseconds of their writing.

Reading them costs three or four forks on the box per command (``stat`` or
its fallbacks and ``date``), not a round trip. A box without ``stat -c``
(BusyBox built without it, a BSD) gets the mtime from ``date -r FILE`` or
``stat -f %m``, the size from ``wc -c``; where nothing gives the mtime or the
box's time, a note says so and the bytes are stamped when they arrive.
"""

from __future__ import annotations

from dataclasses import dataclass

# POSIX sh: ``stamp FILE`` sets clk_s (size), clk_m (mtime, epoch seconds) and
# clk_n (the box's time), each empty where the box cannot say, of the file a symlink names
# (-L: ``latest.log -> run_0412.log`` is read whole, not as its link's 20 bytes). GNU coreutils
# and BusyBox stat take -c; date -r FILE serves BusyBox builds without it and
# GNU alike, stat -f %m a BSD or macOS box; wc -c reads the size without stat.
STAMP = r"""stamp() {
  clk_s=$(stat -L -c %s -- "$1" 2>/dev/null) || clk_s=$({ wc -c <"$1"; } 2>/dev/null | tr -d ' \t')
  clk_m=$(stat -L -c %Y -- "$1" 2>/dev/null || date -r "$1" +%s 2>/dev/null || stat -L -f %m -- "$1" 2>/dev/null)
  clk_n=$(date +%s 2>/dev/null)
}
"""
# The line, once ``stamp`` has run.
CLOCK_LINE = 'echo "CLOCK ${clk_s:--} ${clk_m:--} ${clk_n:--}"'


def _number(field: bytes) -> int | None:
    """A field of the line as a whole number, or None for ``-`` (or anything else)."""
    text = field.strip()
    return int(text) if text.isdigit() and len(text) < 20 else None


@dataclass(frozen=True, slots=True)
class BoxClock:
    """What one ``CLOCK`` line said: the log's size and its mtime on this machine's clock.

    ``box_time``: whether the box gave its own time. Without it, its mtime cannot
    be compared with this clock's, and is left unused rather than trusted: a
    clock an hour behind would call every healthy run stalled.
    """

    size: int | None
    mtime: float | None
    box_time: bool

    @classmethod
    def parse(cls, line: bytes, received_at: float) -> BoxClock | None:
        """The ``CLOCK`` line read at ``received_at`` (this machine's time), or None if it is not one."""
        fields = line.split()
        if len(fields) != 4 or fields[0] != b"CLOCK":
            return None
        size, mtime, box_now = (_number(field) for field in fields[1:])
        if mtime is None or box_now is None:
            return cls(size, None, box_now is not None)
        # Never later than now: the offset is a second or so too large, not too small.
        return cls(size, min(float(mtime) + (received_at - box_now), received_at), True)

    def mtime_for(self, end: int) -> float | None:
        """When bytes ending at ``end`` were written at the latest, if this line can say:
        only bytes the log held when the line was printed were written by its mtime."""
        if self.mtime is None or self.size is None or end > self.size:
            return None
        return self.mtime

    def note(self, host: str, path: str) -> str | None:
        """One line for the user when the box could not give what is needed, else None."""
        if self.mtime is not None:
            return None
        what = (f"`date +%s` on {host} gives no time, so its clock cannot be compared with this one"
                if not self.box_time else
                f"{host} gives no modification time for {path} (no `stat -c`, `date -r` or `stat -f`)")
        return (f"{what}; the time since the last step counts from when rlwatch read it, so a hung "
                "run is called stalled only once rlwatch has watched it for the rule's limit")
