"""What a failure says: the exception line at the end of the block an incident marker opens.

A marker (``Traceback (most recent call last):``, Hydra's ``Error executing
job``, Ray's ``Unhandled error``, a ``File "…", line N`` frame of a traceback
whose header was cut off) says *that* something failed; the line a user needs
is the one that says *what*: ``torch.OutOfMemoryError: CUDA out of memory…``,
the last line of the traceback. This module reads the bytes from a marker on
and finds that line, by the grammar of Python's tracebacks rather than by
sample:

* a traceback is a header, then frames (``  File "…", line N, in f``) each
  followed by indented source lines and ``^^^^`` markers, then one
  unindented exception line ``[module.]Name[(Cause)]: message``; chained
  exceptions add "During handling of the above exception…" or "The above
  exception was the direct cause…" and another traceback, and the last
  exception line printed is the one that propagated;
* every line of one process carries the same prefix (Ray's ``(WorkerDict
  pid=7)``, torchrun's ``[rank3]:``); lines of other processes are
  interleaved and are skipped, their step lines too (Ray forwards a Ray
  actor's step line into the middle of the driver's traceback);
* tqdm bars redrawn with ``\\r`` land inside and in front of those lines;
* a C++ abort says ``terminate called after throwing…`` and then ``what():``;
* Python's ``Exception ignored in: …`` before a traceback means it was
  ignored: such a block is harmless.

The block ends at its exception line once what follows is neither a chained
traceback nor an indented continuation, at a training step line of the same
process, or after a bounded number of lines. It is pure: bytes in, a :class:`CrashBlock` out.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tui.parsers import failed_where, incidents
from tui.parsers.failed_where import merge, read_box_entry, read_line, root_cause_entry
from tui.parsers.incidents import EXCEPTION_LINE
from tui.parsers.indent import common_indent, dedent
from tui.parsers.records import CrashBlock, Where
from tui.parsers.text import PROCESS_PREFIX, decode, strip_ansi, strip_log_header, strip_stamp
from tui.parsers.verl_steps import find_step

_HEADER = "Traceback (most recent call last)"
_HEADERS = (_HEADER, f"Exception Group {_HEADER}")
_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")
_IGNORED = ("Exception ignored in", "Exception ignored on")
# A log record at error or warning level that says it caught something, on the
# line before a traceback: the program logged the exception and went on
# (asyncio's "Exception in callback", uvicorn's "Exception in ASGI
# application", a server's "Method execution failed").
_LOGGED = re.compile(r"\b(?:ERROR|WARNING|WARN|error|warning)\b.{0,120}?"
                     r"(?:Exception in|exception was never retrieved|execution failed|[Ee]xception:)")
# How many lines before a traceback may hold the log record that says it was caught
# (asyncio logs "Exception in callback …", then "handle: <Handle …>", then the traceback).
_BEFORE_LINES = 3
_THREAD = "Exception in thread"
# vLLM's and SGLang's loops announce their own death on the line before the traceback
# (``WorkerProc hit an exception.``, ``EngineCore encountered a fatal error.``, ``EngineCore
# failed to start.``, behind vLLM's log header), and so does Ray for an actor whose
# ``__init__`` raised (``Exception raised in creation task: The actor died because of an
# error raised in its creation task, ray::Trainer.__init__() (…)``, bare or behind Ray's
# ``ERROR worker.py:844 -- ``, the actor's own frames after it): where the traceback is cut
# before its exception line, that says it.
_ANNOUNCED = re.compile(r"\b(?:hit an exception|encountered a fatal error|EngineCore failed to start)\b"
                        r"|\bException raised in creation task: ")
# Lines that say what failed without Python's exception grammar: the
# interpreter's own last words, a C++ abort's what().
_STATEMENTS = ("what():", "Fatal Python error:")
# Rich's boxed traceback (accelerate, typer): ``╭──── Traceback (most recent call last) ────╮``.
_BOX = "╭│"
# A tqdm bar at the start of a segment: ``desc:  5%|▌    | 1/20 [00:01<00:20, 1.2s/it]``.
_BAR = re.compile(r"^[^|\n]{0,200}?\d{1,3}%\|[^|\n]{0,400}\|[^\[\n]{0,40}\[[^\]\n]{0,80}\]")
# How far a block may go: long enough for any real traceback (Ray's nested
# chains run to a few hundred lines), short enough that a marker in chatter
# cannot swallow the log.
_MAX_LINES = 3000
# Unrelated lines of the same process tolerated inside a traceback before it
# is given up as over (a traceback cut off by the user's paste).
_MAX_NOISE = 40
# A marker that is not itself a traceback start (an OOM line, ``terminate
# called…``) may be followed by its header or ``what():`` within this many lines.
_LOOKAHEAD = 3
_MAX_TEXT = 400
# A terminal's copy pads each screen row with spaces to the pane's width and joins
# the rows: ``    raise value<90 spaces>ray.exceptions.ActorDiedError: …`` was two lines.
_PANE_PADDING = re.compile(r"(?<=\S) {24,}(?=\S)")
# torch's ``DistBackendError: NCCL error in: …`` goes on with NCCL's own words on the next
# line, ``ncclInternalError: Internal check failed.`` (``ncclRemoteError``,
# ``ncclUnhandledCudaError``, ``ncclSystemError``): the rest of the message, not another
# exception.
_NCCL_REST = re.compile(r"nccl[A-Z]\w*Error: ")
# torch's hints after a CUDA error's exception line, part of its message (trl2996,
# nccl_rank1_device_assert): not failures of their own.
_CUDA_HINTS = ("CUDA kernel errors might be asynchronously reported", "For debugging consider passing",
               "Compile with `TORCH_USE_CUDA_DSA`", "Search for `cuda", "Device-side assertion tracking")
_OPENS_TRACEBACK = (incidents.TRACEBACK, incidents.HYDRA_ERROR, incidents.RAY_ERROR)
# Python 3.11+ prints an exception group (asyncio's TaskGroup, anyio) with a gutter:
# ``  + Exception Group Traceback …``, ``  |   File …``, ``  | ExceptionGroup: …``, its
# sub-exceptions between ``+-+---------------- 1 ----------------`` and
# ``+------------------------------------`` rules, one level deeper each.
_GROUP_RULE = re.compile(r"^ *\+(?:-\+)?-{4,}(?: (?:\d+|\.\.\.) -+)?$")
# Ray's log deduplication appends `` [repeated 14x across cluster]`` to a line other
# workers printed too, an exception or an NCCL watchdog line included: not the message's.
_DEDUP_SUFFIX = re.compile(r" \[repeated \d+x across cluster\]$")
_GROUP_GUTTER = re.compile(r"^ *[+|] (?=[ A-Za-z_.])")
# A line printed many times over but for its numbers: a CUDA device assert prints one per
# thread (``…IndexKernel.cu:111: operator(): block: [0,0,0], thread: [5,0,0] Assertion `…`
# failed.``, 128 or 384 of them before the exception), a watchdog one per rank. Its shape is
# the line with every run of digits made one.
_DIGITS = re.compile(r"\d+")
# torchrun's ChildFailedError says where in the box after it (``Root Cause (first observed
# failure):``, a field a line), closed by a rule of ``=``; a box entry's own heading is ``[0]:``.
_CHILD_FAILED = "ChildFailedError:"
_BOX_ENTRY = re.compile(r"^\[\d+\]:$")
_BOX_LINES = 40
# How many lines a box entry holds before its ``traceback :`` field, its ``[0]:`` heading and
# the box's ``Root Cause`` line above it.
_BOX_ENTRY_LINES = 8


def shape(line: str) -> str:
    """``line`` with its numbers made one: two lines of the same shape differ only there."""
    return _DIGITS.sub("#", line)


def exception_name(line: str) -> str:
    """``RuntimeError`` of ``RuntimeError: boom`` (the type a recurring error is known by)."""
    match = EXCEPTION_LINE.match(line)
    return match.group(0).rstrip(": ") if match else line[:60]


def _logical_lines(raw: str, headers: bool = False) -> list[tuple[str, str]]:
    """(process prefix, text) of each ``\\r`` segment of a physical line, bars removed, and
    of each screen row a terminal paste joined into one line with padding; vLLM's log
    header is removed too unless ``headers`` (its level says whether a record was logged)."""
    out: list[tuple[str, str]] = []
    for segment in strip_stamp(strip_ansi(raw.rstrip("\r\n"))).split("\r"):
        prefix = ""
        match = PROCESS_PREFIX.match(segment)
        if match:
            prefix, segment = match.group(0).strip(), segment[match.end():]
        if not headers:
            segment = strip_log_header(segment)
        bar = _BAR.match(segment)
        if bar:
            segment = segment[bar.end():]
        for row in _PANE_PADDING.split(segment):
            if _GROUP_RULE.match(row):
                continue
            row = _GROUP_GUTTER.sub("", row, count=1).rstrip()
            if row.endswith("cluster]"):
                row = _DEDUP_SUFFIX.sub("", row)
            if row.strip():
                out.append((prefix, row))
    return out


def read_block(window: bytes, window_start: int, marker: int, kind: str,
               more_may_come: bool) -> CrashBlock | None:
    """The block opened by the marker line at absolute offset ``marker``.

    ``window`` holds the log's bytes from ``window_start`` (at or before the
    marker: the line before it says whether Python ignored the exception) to
    the end of what is known. ``more_may_come``: the window ends where the
    log ends for now and the log is still being written; a block that runs
    to that end without its exception line is then left for later (None).
    """
    head = window[: max(0, marker - window_start)]
    # A block pasted as an indented code block: the indentation its lines share is the
    # paste's, not the traceback's (tui.parsers.indent).
    indent = (common_indent(window, max(0, marker - window_start)) or b"").decode()
    before_lines = [dedent(decode(raw), indent)
                    for raw in head.rstrip(b"\r\n").split(b"\n")[-_BEFORE_LINES:]] if head else []
    said_before = [text.strip() for raw in before_lines for _, text in _logical_lines(raw, headers=True)]
    harmless = bool(said_before) and said_before[-1].startswith(_IGNORED) or (
        kind == incidents.TRACEBACK and any(_LOGGED.search(text) for text in said_before))
    # A thread's uncaught exception is announced on the line before its traceback, and so is
    # a vLLM or SGLang loop's.
    last_said = strip_log_header(said_before[-1]) if said_before else ""
    announced = last_said if last_said.startswith(_THREAD) or _ANNOUNCED.search(last_said) else None
    body = window[max(0, marker - window_start):]
    prefix: str | None = None
    in_trace = kind in _OPENS_TRACEBACK
    saw_trace = False  # a header or a frame: the block is a traceback, not only its opener
    after_exception = False
    lookahead = 0 if in_trace else _LOOKAHEAD
    exception = exception_at = None
    causes: list[tuple[str, str]] = []
    noise = foreign = 0
    source_next = False
    last_noise: tuple[str, int] | None = None
    position = end = marker  # ``end``: past the last line that belonged to the block
    marker_shape: str | None = None  # while the marker line repeats (see ``shape``)
    repeats = 1
    where = _box_entry_before([decode(raw) for raw in head.rstrip(b"\r\n").split(b"\n")[-_BOX_ENTRY_LINES:]]
                              if head else [])
    box: list[str] | None = None  # torchrun's box after a ChildFailedError, while in it
    # The root cause entry's line that says how its worker died (``traceback : Signal 9
    # (SIGKILL) received by PID 957``): it names the block, as the worker printed nothing.
    box_said: tuple[str, int] | None = None

    def finish() -> CrashBlock:
        named = exception if exception is not None or announced is None else announced
        named_at = exception_at
        if box_said is not None:
            named, named_at = box_said
        block = _block(marker, end, kind, named, named_at, causes, harmless)
        said = merge(where, root_cause_entry(box)) if box else where
        return replace(block, process=prefix or "", where=said, repeats=repeats, summary=box is not None)

    lines = body.split(b"\n")
    for number, raw_bytes in enumerate(lines[:_MAX_LINES]):
        if number == len(lines) - 1 and not raw_bytes:
            break  # the window ends with a newline
        line_start, position = position, position + len(raw_bytes) + 1
        raw = dedent(decode(raw_bytes), indent)
        logical = _logical_lines(raw)
        if box is not None:
            if len(box) > _BOX_LINES or (logical and logical[0][0] != (prefix or "")):
                return finish()
            for _, text in logical:
                found = incidents.match_incident(text.strip(), line_start)
                if found is not None and found.kind in incidents.ROOT_CAUSES and box_said is None \
                        and failed_where.ROOT_CAUSE in box:
                    box_said = text.strip(), line_start
                    causes.append((found.kind, text.strip()))
                box.append(text.strip())
            end = min(position, window_start + len(window))
            if any(line.startswith("===") for line in box[1:]) and failed_where.ROOT_CAUSE in box:
                return finish()
            continue
        if number == 0 and len(logical) == 1:
            marker_shape = shape(logical[0][1].strip())
        elif marker_shape is not None:
            if len(logical) == 1 and logical[0][0] == (prefix or "") and \
                    shape(logical[0][1].strip()) == marker_shape:
                repeats += 1
                end = min(position, window_start + len(window))
                continue
            marker_shape = None
        if number > 0 and not in_trace and lookahead <= 0:
            return finish()
        lookahead -= 1
        if number == 0:
            where = merge(read_line(strip_stamp(strip_ansi(raw.rstrip("\r\n"))).split("\r")[-1]), where)
        for line_prefix, text in logical:
            stripped = text.strip()
            if prefix is None:
                prefix = line_prefix
            elif line_prefix != prefix:
                foreign += 1
                if foreign > _MAX_NOISE * 5:
                    return finish()
                continue  # another process's line, interleaved
            foreign = 0
            if number > 0 and find_step(stripped) is not None:
                return finish()  # this process went on: whatever this was, it is over
            found = incidents.match_incident(stripped, line_start)
            if found is not None:
                causes.append((found.kind, stripped))
            if _FRAME.match(text):
                in_trace, after_exception, noise, source_next = True, False, 0, True
                saw_trace = True
                end = min(position, window_start + len(window))
                continue
            if source_next:
                # The line after a frame is its source line, even where a paste
                # lost the indentation.
                source_next = False
                if not (stripped.startswith(_HEADER) or EXCEPTION_LINE.match(stripped)):
                    end = min(position, window_start + len(window))
                    continue
            if stripped.startswith(_HEADERS) or (stripped[:1] in _BOX and _HEADER in stripped):
                in_trace, after_exception, noise = True, False, 0
                saw_trace = True
            elif stripped.startswith(_CHAINED):
                after_exception = False
            elif stripped.startswith(_STATEMENTS):
                if exception is None:  # an abort's what() says more than "Aborted" after it
                    exception, exception_at = stripped, line_start
                    where = merge(where, read_line((prefix or "") + " " + stripped))
                after_exception = True
            elif text[:1].isspace() or set(stripped) <= set("^~ ") or (
                    after_exception and (_NCCL_REST.match(stripped) or stripped.startswith(_CUDA_HINTS))):
                pass  # source lines, carets, an exception message's indented (or NCCL's) rest
            elif EXCEPTION_LINE.match(stripped):
                exception, exception_at = stripped, line_start
                if exception_at != marker:
                    where = merge(where, read_line((prefix or "") + " " + stripped))
                if _CHILD_FAILED in stripped and not stripped.split(_CHILD_FAILED, 1)[1].strip():
                    box = []  # its message is the box that follows
                # Ray's ``RayTaskError(ValueError): ray::Actor.method() (pid=…)`` heads the
                # remote traceback that follows it, header-less: its last line says more.
                after_exception = "ray::" not in stripped
                in_trace = in_trace or not after_exception
            elif number > 0 and (after_exception or not in_trace):
                return finish()
            elif number > 0:
                noise += 1
                last_noise = (stripped, line_start)
                if noise > _MAX_NOISE:
                    return finish()
                end = min(position, window_start + len(window))
                continue
            last_noise = None
            end = min(position, window_start + len(window))
    if more_may_come and exception is None:
        return None
    if exception is None and saw_trace and last_noise is not None:
        # A traceback cut off at the end of the log (a paste, a process killed
        # mid-print): its last line is the nearest thing to what failed. Without
        # a header or a frame (Hydra's ``Error executing job with overrides: [...]``
        # wrapped over rows, then cut) the rows are the opener's own text, and the
        # opener says more.
        exception, exception_at = last_noise
    return finish()


def _box_entry_before(before: list[str]) -> Where:
    """Where the torchrun box entry that a marker line stands in (``traceback : Signal 9
    (SIGKILL) received by PID 957``) says the failure was, from the entry's lines before it;
    nothing unless the entry is the box's root cause (the workers torchrun stopped itself
    are listed under ``Failures:``)."""
    lines = [strip_stamp(strip_ansi(line)).rstrip() for line in before]
    for at in range(len(lines) - 1, -1, -1):
        if _BOX_ENTRY.match(lines[at].strip()):
            heading = lines[at - 1].strip() if at > 0 else failed_where.ROOT_CAUSE
            if heading == failed_where.ROOT_CAUSE:
                return read_box_entry(lines[at + 1:])
            break
    return Where()


def _block(marker: int, end: int, kind: str, exception: str | None, exception_at: int | None,
           causes: list[tuple[str, str]], harmless: bool) -> CrashBlock:
    """Name the block by its exception line and its most telling cause.

    The block is of the most specific kind any of its lines shows (a Hydra
    error whose traceback ends in a dead actor is a dead actor; a RuntimeError
    raised because a worker ran out of memory is an OOM); a line that says why
    a process died is kept as the cause where the exception line does not say it.
    """
    cause_kind, cause = kind, ""
    for found_kind, line in causes:
        if incidents.CAUSE_ORDER.index(found_kind) < incidents.CAUSE_ORDER.index(cause_kind):
            cause_kind, cause = found_kind, line
    if cause_kind not in incidents.ROOT_CAUSES:
        cause = ""  # only a reason a process died is worth a line of its own
    text = exception if exception is not None else (cause or (causes[0][1] if causes else ""))
    said = incidents.match_incident(text, 0)
    if said is not None and said.kind == cause_kind:
        cause = ""
    return CrashBlock(offset=marker, end=max(end, marker + 1), kind=cause_kind,
                      exception=text[:_MAX_TEXT], exception_offset=exception_at,
                      cause=cause[:_MAX_TEXT] if cause != text else "", harmless=harmless)
