"""verl's ``file`` logger: one JSON record per ``Tracking.log`` call.

Each line is ``{"step": N, "data": {key: value, …}}`` with every value the
trainer logged, unrounded, which makes it the most exact source of a run's
metrics. Two spellings exist (VERL_FORMATS.md §2):

* v0.6.0–v0.7.0 write ``json.dumps(record)``: spaced separators, NaN and
  infinities as bare ``NaN`` / ``Infinity``, ``null`` only for a Python None;
* v0.7.1+ write ``orjson.dumps(record)``: compact, and NaN *and* ±Infinity
  both become ``null`` (so a ``null`` there is read as NaN: not finite, sign
  unknown).

Values that are not numbers (strings, lists, the validation tables some
trainers log) are skipped, as verl's console logger skips them. The file is
reopened in write mode on every (re)start, so a reader also meets a last line
cut by a killed process, and NUL bytes where a still-running writer wrote
past the truncation; neither stops the lines after it from being read.
"""

from __future__ import annotations

import json
import math
import re

from tui.parsers.log_scanner import HOLE, MAX_LINE_BYTES, after_hole
from tui.parsers.records import StepRecord


# How every line of verl's file logger starts, in both spellings (``{"step": N, "data": {``
# and orjson's compact ``{"step":N,"data":{``). Written so that it means the same as a
# Python regex and as a POSIX ERE: the box checks a remote JSONL with ``grep -E`` on its
# first line, and a local one is checked with this, so both take the same files.
RECORD_START = r'^\{"step": ?-?[0-9]+, ?"data": ?\{'
_RECORD_START = re.compile(RECORD_START.encode())
# Bytes of a file read to judge it: the record's start is all that is checked, so a
# directory of thousands of rollout dumps costs a few hundred bytes a file.
HEAD_BYTES = 256


def is_file_logger_head(head: bytes) -> bool:
    """True if ``head`` (a file's first bytes) starts like verl's file-logger JSONL.

    A run directory holds other ``*.jsonl`` files (rollout dumps, datasets);
    only a first line of verl's ``{"step": N, "data": {...}}`` makes a file a
    run's metrics. The first line is judged, not every line: a run that was
    killed mid-line leaves a cut last line, which the scanner skips.
    """
    first = head.split(b"\n", 1)[0]
    return _RECORD_START.match(first) is not None


def parse_record(line: bytes, offset: int = 0) -> StepRecord | None:
    """The step record one JSONL line holds, or None if the line is not one."""
    text = line.strip(b"\x00 \t\r\n")
    if not text.startswith(b"{"):
        return None
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        return None  # cut by a killed writer, or junk
    if not isinstance(record, dict):
        return None
    step, data = record.get("step"), record.get("data")
    if type(step) is not int or not isinstance(data, dict):
        return None
    null = math.nan if _is_compact(text) else None
    metrics: dict[str, float] = {}
    for key, value in data.items():
        number = _number(value, null)
        if number is not None:
            metrics[key] = number
    return StepRecord(step, metrics, offset, offset + len(line))


def _is_compact(text: bytes) -> bool:
    """True for orjson's compact spelling (v0.7.1+), where ``null`` stands for NaN/±inf.

    ``json.dumps`` puts a space after the first key's colon; orjson never does.
    """
    colon = text.find(b'":')
    return colon != -1 and text[colon + 2: colon + 3] != b" "


def _number(value: object, null: float | None) -> float | None:
    if value is None:
        return null
    if isinstance(value, bool):
        return 1.0 if value else 0.0  # as the console prints True/False
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return None  # an integer beyond float range is not a metric anyone plots
    return None


class JsonlScanner:
    """Turns a JSONL file, fed in order as bytes, into step records.

    Like the console scanner, ``consumed`` is the absolute offset up to which
    bytes became records, so a follower resumes there; a last line without
    its newline waits for more bytes (the writer may be mid-line) until
    ``finish``.
    """

    def __init__(self, offset: int = 0) -> None:
        self._buf = b""
        self._buf_offset = offset
        self.skipped_lines = 0

    @property
    def consumed(self) -> int:
        """Absolute offset of the first byte not yet turned into records."""
        return self._buf_offset

    def feed(self, data: bytes) -> list[StepRecord]:
        """Add bytes that follow those already fed; return the records of the whole lines."""
        self._buf += data
        end = self._buf.rfind(b"\n") + 1
        if end == 0 and len(self._buf) > MAX_LINE_BYTES:
            # No newline in 16 MiB: junk; keep memory bounded, but not the start of the
            # line a hole's NULs end (tui.parsers.log_scanner.HOLE).
            end = self._buf.rfind(HOLE) + 1
            if end == 0 or len(self._buf) - end > MAX_LINE_BYTES:
                end = len(self._buf)
        return self._take(end)

    def finish(self) -> list[StepRecord]:
        """Records of what is left, including a last line with no newline."""
        return self._take(len(self._buf))

    def _take(self, end: int) -> list[StepRecord]:
        records: list[StepRecord] = []
        buf, start = self._buf, 0
        while start < end:
            newline = buf.find(b"\n", start, end)
            line_end = end if newline == -1 else newline + 1
            start = after_hole(buf, start, line_end)
            line = buf[start:line_end]
            if line.strip(b" \t\r\n"):
                record = None if len(line) > MAX_LINE_BYTES else parse_record(
                    line, self._buf_offset + start)
                if record is None:
                    self.skipped_lines += 1
                else:
                    records.append(record)
            start = line_end
        self._buf = buf[end:]
        self._buf_offset += end
        return records
