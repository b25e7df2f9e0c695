"""Letting ``grep`` pick out the interesting lines of a big log.

``grep -a -b`` with the scanner's fixed strings reads a file several times
faster than Python can look for the same strings; its output is
``OFFSET:LINE`` per match, which is all the scanner needs. The same command
runs locally (where Hyperscan is missing) and, over SSH, on the training box.
The strings go to grep as one extended regular expression of escaped
alternatives rather than as ``-F`` patterns: GNU grep reads the same dozens of
literals with a quarter less CPU that way (measured on both bench workloads),
and the box's CPU is what a remote backfill waits for.
"""

from __future__ import annotations

import asyncio
import functools
import re
import shlex
from collections.abc import AsyncIterator, Awaitable, Sequence

# A piece's grep output is read in chunks of this size.
_READ_BYTES = 1 << 20
# Asks dd whether it can skip and count bytes (GNU coreutils, recent BusyBox):
# without that, a log is grepped in one piece.
DD_CAN_CUT = "dd if=/dev/null of=/dev/null bs=1M skip=0 count=0 iflag=skip_bytes,count_bytes 2>/dev/null"


# The bytes that start a character and are common in log chatter, most common first:
# their mean share of the lines no needle picks in three references is over 0.05% — the
# corpus logs (../shared/corpus/verl_logs), bench/make_log.py's chatter and seed 001's
# (../shared/bench/chatter_log.py: Chinese and English text between "=" * 80 rules).
# Any other byte is rarer than all of these.
COMMON_LOG_BYTES = (b" e=rtasnco-mdiulhp'k_0fg31b62[w4587:9().\x1b#Ty]xDvW\xe6,/\xe7j\xe5R\xe8\xe9F$S"
                    b'"^')
# What an extended regular expression gives a meaning to, escaped to stand for itself.
_ERE_SPECIAL = re.compile(r"([.\[\]()*+?{}|^$\\])")
# A part of a needle shorter than this would match chatter by chance ("wing" of "after
# throwing" is in "following"; "p:" of "step:" in every "foo.cpp:12" of a C++ warning).
_MIN_FORM = 5


def grep_needles(needles: Sequence[bytes]) -> tuple[bytes, ...]:
    """What grep looks for: for each needle, the part of it that starts with its rarest byte.

    GNU grep's search for many strings stops at every byte that can start
    one of them and walks on from there, so its cost follows how common the
    strings' first bytes are in the chatter around the wanted lines (seed
    001's chatter: 2.1 CPU-seconds a GiB for the parts the corpus alone
    ranked, 1.3 for these; bench/make_log.py's: 1.2 and 1.0). A part matches
    every line its needle does, and the few lines it matches besides are
    dropped by the scanner, which checks whole needles. Parts are at least
    ``_MIN_FORM`` bytes (or the whole needle) and start and end on character
    boundaries (the expression is text). A needle that opens a Ray actor
    prefix (``(Runner pid=``) is searched whole: its parts are parts of other
    actors' names too (``(TaskRunner pid=`` prefixes most of a verl log).
    Ties go to the longer part.
    """
    def cost(form: bytes) -> tuple[int, int]:
        """Lower for a rarer first byte, then for a longer part."""
        return (len(COMMON_LOG_BYTES) - COMMON_LOG_BYTES.find(form[:1]) if form[:1] in COMMON_LOG_BYTES
                else 0, -len(form))

    return tuple(dict.fromkeys(min(_parts(needle), key=cost) for needle in needles))


def _parts(needle: bytes) -> list[bytes]:
    """The parts of ``needle`` grep may look for instead of it (see ``grep_needles``)."""
    if needle.startswith(b"("):
        return [needle]
    bounds = [at for at in range(len(needle) + 1) if at == len(needle) or not 0x80 <= needle[at] < 0xC0]
    shortest = min(len(needle), _MIN_FORM)
    return [needle[a:b] for a in bounds for b in bounds if b - a >= shortest]


def literal_ere(needles: Sequence[bytes]) -> str:
    """A POSIX extended regular expression matching any of ``needles`` literally."""
    return _literal_ere(tuple(needles))


@functools.lru_cache(maxsize=8)
def _literal_ere(needles: tuple[bytes, ...]) -> str:
    """``literal_ere``, worked out once per set of needles: choosing the parts takes a few
    milliseconds, and a remote run's script holds the expression four times (a fleet
    of twenty runs built it eighty times, on the thread that draws)."""
    return "|".join(_ERE_SPECIAL.sub(r"\\\1", needle.decode()) for needle in grep_needles(needles))


def grep_command(needles: Sequence[bytes], path: str) -> list[str]:
    """The argv of a byte-offset, binary-safe grep for any of ``needles`` in ``path``."""
    return ["grep", "-a", "-b", "-E", "-e", literal_ere(needles), "--", path]


def grep_stdin(needles: Sequence[bytes]) -> str:
    """A byte-offset, binary-safe grep for any of ``needles`` on stdin."""
    return f"LC_ALL=C grep -a -b -E -e {shlex.quote(literal_ere(needles))}"


def grep_piece(path: str, needles: Sequence[bytes], start: int, end: int | None) -> str:
    """``grep -b`` for the needles over ``[start, end)`` (to EOF when ``end`` is None).

    Offsets are relative to ``start``. The last piece is reached with a seek
    (``dd count=0`` on grep's own stdin) and read by grep directly; the
    others are cut out by ``dd`` in 1 MiB blocks and piped.
    """
    return piece_command(shlex.quote(path), needles, str(int(start)),
                         None if end is None else str(max(0, int(end) - int(start))))


def piece_command(path: str, needles: Sequence[bytes], start: str, length: str | None) -> str:
    """``grep_piece`` from shell words, already quoted (the box's backfill script passes
    its variables): ``length`` bytes of ``path`` from ``start``, or to EOF when None."""
    grep = grep_stdin(needles)
    if length is None:
        return f"{{ dd bs=1 skip={start} count=0 2>/dev/null; {grep}; }} <{path}"
    return (f"dd if={path} bs=1M skip={start} count={length} iflag=skip_bytes,count_bytes "
            f"2>/dev/null | {grep}")


def piece_starts(resume_at: int, cpus: int, min_bytes: int) -> list[int]:
    """Where to cut ``[0, resume_at)`` into one piece per CPU (at most 8, each at least
    ``min_bytes``), before aligning each cut to the next line start.

    The last piece is read by grep straight from the file and the others
    through a pipe, which costs grep half as much again per byte, so the last
    is 1.5 times as long as the others. The SSH plan computes the same cuts in
    shell on the box (``tui.sources.ssh.remote_commands``).
    """
    pieces = max(1, min(cpus, 8, resume_at // max(1, min_bytes)))
    return [resume_at * 2 * i // (2 * pieces + 1) for i in range(1, pieces)]


class GrepOutput:
    """Splits ``grep -b`` output, fed in arbitrary chunks, into (offset, line) pairs.

    ``base`` is added to every offset: grep counts from where it started reading,
    which for a piece of a file is the piece's start. A line that is not grep's
    (``OFFSET:`` missing) goes to ``other_line``, which may move ``base`` or set
    ``ended``; after ``ended`` nothing more is split, and the bytes not yet
    split are ``unsplit``.
    """

    def __init__(self, base: int = 0) -> None:
        self.unsplit = b""
        self.base = base
        self.ended = False

    def feed(self, chunk: bytes) -> list[tuple[int, bytes]]:
        """Complete ``(offset, line)`` pairs in the bytes so far; lines keep their newline."""
        data = self.unsplit + chunk if self.unsplit else chunk
        out = []
        start = 0
        # not splitlines(): a line may hold \r
        while not self.ended and (stop := data.find(b"\n", start) + 1):
            offset, colon, line = data[start:stop].partition(b":")
            if colon and offset.isdigit():
                out.append((self.base + int(offset), line))
            else:
                self.other_line(data[start:stop])
            start = stop
        self.unsplit = data[start:]
        return out

    def other_line(self, line: bytes) -> None:
        """A line without grep's ``OFFSET:``: none comes from grep itself."""


async def drain(stdout: asyncio.StreamReader, base: int, resume_at: int, queue: PieceQueue) -> None:
    """Put a piece's ``(offset, line)`` batches on ``queue`` until its output ends.

    Offsets count from ``base`` (the piece's start); lines from ``resume_at``
    on are dropped, since the follower reads them (the last piece reads to EOF).
    """
    output = GrepOutput(base=base)
    while chunk := await stdout.read(_READ_BYTES):
        if batch := [(o, line) for o, line in output.feed(chunk) if o < resume_at]:
            queue.put_nowait(batch)


async def piece(queue: PieceQueue, work: Awaitable[None]) -> None:
    """Run ``work`` (which puts a piece's batches on ``queue``), then mark the piece done
    with None; or, when it fails, pass its error on for ``in_order`` to raise.

    An output that stopped early must never pass for a finished piece: the
    lines of the pieces after it would be taken, and its missing lines lost.
    """
    try:
        await work
    except BaseException as error:
        queue.put_nowait(_Failed(error))
        raise
    queue.put_nowait(None)


async def in_order(queues: Sequence[PieceQueue]) -> AsyncIterator[list[tuple[int, bytes]]]:
    """The batches of every piece, piece after piece: the first streams as it comes, later ones
    wait until those before them are done (their output is small: the matching lines).
    A piece that failed raises its error here, before any later piece is read."""
    for queue in queues:
        while (batch := await queue.get()) is not None:
            if isinstance(batch, _Failed):
                raise batch.error
            yield batch


class _Failed:
    """A piece's error, queued where its end would be."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


# What a piece's reader queues: batches of ``(offset, line)``, then None at its end, or its error.
PieceQueue = asyncio.Queue["list[tuple[int, bytes]] | _Failed | None"]
