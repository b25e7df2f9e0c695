"""The streaming console-log scanner: log bytes in, records with byte offsets out.

Verbose reward functions make real logs gigabytes of chatter around a few
thousand metric lines, so the scanner never looks at every line in Python:
it asks ``bytes.find`` (memchr speed) for a short list of needles and parses
only the lines that contain one. Everything else is skipped unread.

The scanner is pure: the caller feeds bytes in file order (``feed``) or
isolated lines whose offsets it knows (``scan_line``, for lines a remote
``grep -b`` already picked out), and gets records back.
"""

from __future__ import annotations

import re

from tui.parsers import hard_wrap, kin
from tui.parsers.indent import common_indent, dedent
from tui.parsers.failed_where import read_line
from tui.parsers.incidents import FRAME_NEEDLE, TRACEBACK, incident_needles, match_incident
from tui.parsers.stall_evidence import bar_phase, match_phase, phase_needles
from tui.parsers.records import (
    Record,
    RunEndRecord,
    SampleMarkRecord,
    StepRecord,
    TotalStepsRecord,
)
from tui.parsers.text import (
    PROCESS_PREFIX,
    clean_segments,
    decode,
    strip_ansi,
    strip_ray_prefix,
    strip_stamp,
)
from tui.parsers.tqdm_progress import parse_bar
from tui.parsers.verl_steps import find_step, parse_items

# The run's total: verl's trainer says ``Total training steps: N``; its actor and critic
# workers say it again when they build the LR schedule over it, ``Total steps: N,
# num_warmup_steps: M`` (a window or a worker's own log may hold only those).
_TOTAL_STEPS = re.compile(r"Total training steps: (\d+)|Total steps: (\d+), num_warmup_steps: ")
# verl prints the final validation metrics after its last step. (wandb's
# ``Find logs at:`` and run summary are printed on any exit, a crash too: they
# say nothing about how the run ended.)
_RUN_END = ("Final validation metrics",)
# How much of a newline-less last line is looked at for its newest bar (a bar is
# under 200 bytes; a line of many redraws keeps its newest at the end).
_BAR_TAIL_BYTES = 4096

# Every line any grammar could want contains one of these; all other lines
# are skipped without being decoded.
NEEDLES: tuple[bytes, ...] = (
    b"step:",
    b"%|",
    b"Total training steps",
    b", num_warmup_steps: ",
    b"[prompt]",
    *(marker.encode() for marker in _RUN_END),
    *(needle.encode() for needle in incident_needles()),
    *(needle.encode() for needle in phase_needles()),
    *kin.NEEDLES,  # the other trainers' grammars (tui/parsers/kin)
)

# A frame line this close after another incident line belongs to the same
# traceback: the block is read whole from its first marker when it matters
# (tui.parsers.crash_block), so its frames need no record each.
_SAME_BLOCK_BYTES = 4096
# A line longer than this is not a log line anyone printed on purpose (binary
# junk, a runaway print); it is skipped whole and counted.
MAX_LINE_BYTES = 16 * 1024 * 1024
# A run of NULs is a hole, not text: logrotate's copytruncate empties a log under a writer
# that keeps its offset, and the file reads as NULs up to where the writer goes on. The hole
# has no newline, so it would glue itself to the next real line (over ``MAX_LINE_BYTES``,
# that line was skipped whole and its step lost); a NUL therefore ends a line here.
HOLE = b"\x00"
# A physical line is cut at exactly a buffer size by some capture tools (the
# corpus has step lines cut at 4,096 bytes): its last item is not trusted.
_CUT_LENGTHS = frozenset(1 << k for k in range(10, 25))
# How many rows a hard-wrapped step line may span before the scanner stops
# looking for more (a 20 kB line in a 100-column terminal).
_MAX_WRAP_ROWS = 400


class LogScanner:
    """Turns a console log, fed in order as bytes, into records.

    ``consumed`` is the absolute offset up to which the bytes have been
    processed; a follower that reconnects resumes from there and neither
    loses nor repeats a record.
    """

    def __init__(self, offset: int = 0) -> None:
        self._buf = b""
        self._buf_offset = offset
        self._kin = kin.KinLines()
        self.skipped_lines = 0
        # Where the last incident line started (frames close after it are dropped).
        self._last_incident: int | None = None
        # The indentation every line so far shares (a log pasted as an indented code
        # block; None before the first line): taken off each line before any grammar.
        self._indent: bytes | None = None

    @property
    def consumed(self) -> int:
        """Absolute offset of the first byte not yet turned into records."""
        return self._buf_offset

    def feed(self, data: bytes) -> list[Record]:
        """Add bytes that follow those already fed; return the records completed."""
        if data:
            self._buf += data
        return self._drain(final=False)

    def finish(self) -> list[Record]:
        """Process what is left, including a last line with no newline."""
        return self._drain(final=True) + self._kin.finish()

    def settle(self) -> list[Record]:
        """The writer has paused: stop waiting for a hard-wrap continuation.

        A step line of terminal width at the end of the bytes so far is held
        back in case its next row is a wrapped continuation; a log that is
        being written does not grow wrapped rows, so when the source has
        caught up the held line is parsed as it is. A last line without a
        newline still waits. A burst of buffered trainer dicts held for the
        bar's next tick is numbered now: the last one of a run (or of a run
        that just crashed) gets no tick after it.
        """
        return self._drain(final=False, settled=True) + self._kin.settle() + self._newest_bar()

    def _newest_bar(self) -> list[Record]:
        """The newest tqdm bar of the last line, which has no newline yet.

        tqdm redraws its bar with ``\r`` and writes the newline only when the
        loop ends, so the bar a user sees now (the s/it and ETA the header
        shows) sits in a line the scanner holds back; without this the header
        lagged one bar, while ``check`` (which finishes the bytes) did not.
        The line stays unconsumed: it is parsed whole, bars and all, once its
        newline comes, and the newest bar read again then is the same one.
        """
        partial = self._buf[-_BAR_TAIL_BYTES:]
        if b"\r" not in partial and b"it]" not in partial:
            return []
        for segment in reversed(clean_segments(decode(partial))):
            if find_step(segment) is None:
                bar = parse_bar(segment, self._buf_offset)
                if bar is not None:
                    return [bar]
        return []

    def skip_to(self, offset: int) -> None:
        """Continue at ``offset``: the bytes before it were handled elsewhere (a remote grep)."""
        self._buf = b""
        self._buf_offset = offset

    def scan_line(self, line: bytes, offset: int) -> list[Record]:
        """Records from one isolated physical line that starts at ``offset``.

        A line without one of the whole ``NEEDLES`` gives nothing, as in
        ``feed``: grep looks for parts of them (``tui.sources.grep_filter``).
        """
        # Where every needle lies matters only past a hole's NULs; elsewhere the first needle
        # found will do (a million-step log's lines each searched for all ~80 needles whole
        # took twice the CPU of the parse itself).
        if HOLE in line:
            found = [at for needle in NEEDLES if (at := line.find(needle)) != -1]
            if found:
                start = after_hole(line, 0, min(found))
                line, offset = line[start:], offset + start
            has_needle = bool(found)
        else:
            has_needle = any(needle in line for needle in NEEDLES)
        if len(line) > MAX_LINE_BYTES:
            self.skipped_lines += 1
            return []
        if not has_needle:
            return []
        # The needle lines alone do not say what every line shares (NeMo-RL's bullets are
        # all indented): a log pasted indented is a local file, read by ``feed``.
        return self._parse_line(decode(line), offset, offset + len(line), len(line))

    # -- internals -----------------------------------------------------------

    def _drain(self, final: bool, settled: bool = False) -> list[Record]:
        buf = self._buf
        end = len(buf) if final else buf.rfind(b"\n") + 1
        if end == 0:
            if len(buf) > MAX_LINE_BYTES:
                # No newline in 16 MiB: junk (or a hole). Drop it so memory stays bounded,
                # but keep what follows a hole's last NUL: the start of the writer's next line.
                drop = buf.rfind(HOLE) + 1
                if drop == 0 or len(buf) - drop > MAX_LINE_BYTES:
                    drop = len(buf)
                self.skipped_lines += 1
                self._buf_offset += drop
                self._buf = buf[drop:]
            return []
        records: list[Record] = []
        stop = end
        resume = 0
        if self._indent != b"":
            self._indent = common_indent(buf, 0, end, self._indent)
        resume = self._table_rows(buf, 0, end, records)
        for start in self._candidate_starts(buf, end):
            if start < resume:
                continue  # already consumed as a row of a wrapped line or of a table
            line_end = _line_end(buf, start, end)
            if line_end - start > MAX_LINE_BYTES:
                self.skipped_lines += 1
                resume = line_end
                continue
            text = self._dedent(decode(buf[start:line_end]))
            joined = self._join_wrapped(buf, text, line_end, end, final or settled)
            if joined is None:
                stop = start  # a wrapped line may go on in bytes not yet here
                break
            text, line_end = joined
            records.extend(
                self._parse_line(text, self._buf_offset + start, self._buf_offset + line_end,
                                 line_end - start)
            )
            resume = self._table_rows(buf, line_end, end, records)
        self._buf = buf[stop:]
        self._buf_offset += stop
        return records

    @staticmethod
    def _candidate_starts(buf: bytes, end: int) -> list[int]:
        starts: set[int] = set()
        for needle in NEEDLES:
            pos = buf.find(needle, 0, end)
            while pos != -1:
                starts.add(after_hole(buf, buf.rfind(b"\n", 0, pos) + 1, pos))
                next_line = buf.find(b"\n", pos, end)
                if next_line == -1:
                    break
                pos = buf.find(needle, next_line + 1, end)
        return sorted(starts)

    def _join_wrapped(
        self, buf: bytes, text: str, line_end: int, end: int, final: bool
    ) -> tuple[str, int] | None:
        """Join terminal-wrapped rows of a step line; None means 'wait for more bytes'."""
        segments = clean_segments(text)
        if not segments or find_step(segments[-1]) is None:
            return text, line_end
        first_row = text.rstrip("\r\n")
        if not hard_wrap.may_be_wrapped(first_row):
            return text, line_end
        joined = last_row = first_row
        rows = 1
        while rows < _MAX_WRAP_ROWS:
            if line_end >= end:
                if not final:
                    return None
                break
            next_end = _line_end(buf, line_end, end)
            row = self._dedent(decode(buf[line_end:next_end])).rstrip("\r\n")
            if not hard_wrap.continues(joined, last_row, len(first_row), rows, row):
                break
            # A row short of the width lost trailing spaces when it was copied
            # out of the terminal; put them back before the next row.
            joined += " " * max(0, len(first_row) - len(last_row)) + row
            last_row = row
            rows += 1
            line_end = next_end
        return (joined if rows > 1 else text), line_end

    def _table_rows(self, buf: bytes, start: int, end: int, records: list[Record]) -> int:
        """Hand the lines from ``start`` to an open notebook table (tui.parsers.kin.hf_notebook)
        until one is not a row; its rows carry no needle. Returns where they end."""
        while self._kin.table_open and start < end:
            line_end = _line_end(buf, start, end)
            row = strip_ray_prefix(strip_ansi(self._dedent(decode(buf[start:line_end])).rstrip("\r\n")))
            rows = self._kin.table_row(row,
                                       self._buf_offset + start, self._buf_offset + line_end)
            if rows is None:
                break
            records.extend(rows)
            start = line_end
        return start

    def _dedent(self, text: str) -> str:
        """``text`` without the indentation the whole log shares (tui.parsers.indent)."""
        return dedent(text, self._indent.decode()) if self._indent else text

    def _parse_line(self, text: str, offset: int, end: int, raw_length: int) -> list[Record]:
        records: list[Record] = []
        self._kin.begin_line(text)
        for segment in clean_segments(text):
            found = find_step(segment)
            bar_text = segment if found is None else segment[: found[1]]
            bar = parse_bar(bar_text, offset)
            if bar is not None:
                records.extend(self._kin.on_bar(bar, segment))
                if (generating := bar_phase(bar, bar_text)) is not None:
                    records.append(generating)
                if found is None:
                    # A traceback printed while a bar had no newline yet is glued to it.
                    records.extend(self._incident(segment, offset))
            if found is not None:
                step, items_at = found
                metrics, dropped = parse_items(segment[items_at:])
                if raw_length in _CUT_LENGTHS and metrics:
                    metrics.pop(next(reversed(metrics)))
                    dropped += 1
                prefixed, pid = _process_prefix(text)
                records.append(StepRecord(step, metrics, offset, end, dropped,
                                          prefixed=prefixed, pid=pid))
                self._last_incident = None
                self._kin.saw_step(step)
                continue
            if bar is not None:
                if kin.follows_bar(segment):  # a trainer's dict glued to the bar
                    records.extend(self._kin_records(segment, offset, end))
                continue
            records.extend(self._other_records(segment, offset, end))
        return records

    def _other_records(self, segment: str, offset: int, end: int) -> list[Record]:
        total = _TOTAL_STEPS.search(segment)
        if total is not None:
            return [TotalStepsRecord(int(total.group(1) or total.group(2)), offset)]
        if any(marker in segment for marker in _RUN_END):
            return [RunEndRecord(offset)]
        if segment.lstrip().startswith("[prompt]"):
            return [SampleMarkRecord(offset)]
        incident = self._incident(segment, offset)
        if incident:
            return incident
        phase = match_phase(segment, offset)
        if phase is not None:
            return [phase]
        return self._kin_records(segment, offset, end)

    def _kin_records(self, segment: str, offset: int, end: int) -> list[Record]:
        """The other trainers' grammars (tui/parsers/kin) on a segment verl's did not take."""
        records = self._kin.parse(segment, offset, end)
        if any(isinstance(record, StepRecord) for record in records):
            self._last_incident = None
        return records

    def _incident(self, segment: str, offset: int) -> list[Record]:
        """The segment's incident, unless it is one more frame of the traceback just seen."""
        incident = match_incident(segment, offset)
        if incident is None:
            return []
        previous, self._last_incident = self._last_incident, offset
        if (incident.kind == TRACEBACK and FRAME_NEEDLE in incident.text and previous is not None
                and 0 <= offset - previous <= _SAME_BLOCK_BYTES):
            return []
        return [incident]


def _process_prefix(line: str) -> tuple[bool, int | None]:
    """Whether a physical line starts with a process prefix (Ray's, torchrun's), and the pid
    in Ray's (``(TaskRunner pid=16672)``), if any: the line's head is cleaned once for both."""
    head = strip_stamp(strip_ansi(line[:200]).lstrip("\r"))
    return (PROCESS_PREFIX.match(head) is not None,
            read_line(head).pid if "pid=" in line[:200] else None)


def after_hole(buf: bytes | bytearray, start: int, pos: int) -> int:
    """Where the line that holds ``buf[pos]`` starts, given that it starts at ``start`` or
    later: just past the last NUL before ``pos`` (see ``HOLE``), else ``start``."""
    nul = buf.rfind(HOLE, start, pos)
    return start if nul == -1 else nul + 1


def _line_end(buf: bytes, start: int, end: int) -> int:
    newline = buf.find(b"\n", start, end)
    return end if newline == -1 else newline + 1

