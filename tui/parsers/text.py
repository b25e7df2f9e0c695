"""Cleaning a raw console line before any grammar looks at it.

Ray forwards actor output with a coloured ``(TaskRunner pid=N)`` prefix, tqdm
redraws with ``\\r``, and users' terminals add colour codes; all of that is
stripped here, once, so every grammar sees plain text.
"""

from __future__ import annotations

import re

# CSI sequences (colours, cursor moves) and the two-byte ESC forms tqdm and
# terminals leave behind.
_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[A-Za-z]|[()][A-Z0-9]|[=>78])")
# ``(TaskRunner pid=1)``, ``(pid=1)``, ``(main_task pid=1)``,
# ``(TaskRunnerV1 pid=1, ip=10.0.0.2)``, ``(raylet)``; may repeat after a
# carriage return, so it is stripped wherever a segment starts. torchrun's
# per-rank prefixes (``[rank3]:``, ``[default0]:`` with ``--tee``) are the same
# kind of thing: which process printed the line.
# A paste that lost the ESC bytes leaves ``[36m(WorkerDict pid=7)[0m`` behind.
_RAY_NAME = r"\((?:[\w.:-]+ )?pid=\d+(?:, ip=[^)]*)?\)|\(raylet(?:, ip=[^)]*)?\)"
PROCESS_PREFIX = re.compile(rf"^(?:\[[\d;]{{1,12}}m)?(?:{_RAY_NAME})(?:\[[\d;]{{0,12}}m)?\s?"
                            r"|^\[(?:rank|default)\d+\]:\s?")


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences (colours, cursor movement)."""
    if "\x1b" not in text:
        return text
    return _ANSI.sub("", text)


def strip_ray_prefix(text: str) -> str:
    """Remove a leading process prefix: Ray's ``(TaskRunner pid=12)``, torchrun's ``[rank3]:``."""
    if not text.startswith(("(", "[")):
        return text
    return PROCESS_PREFIX.sub("", text, count=1)


def decode(raw: bytes) -> str:
    """Decode log bytes; invalid UTF-8 becomes U+FFFD rather than an error."""
    return raw.decode("utf-8", errors="replace")


def clean_segments(line: str) -> list[str]:
    """Split a physical line into its ``\\r``-separated redraws, each cleaned.

    A tqdm bar rewrites itself with ``\\r`` many times in one physical line;
    every segment is kept because a step line can follow the last bar redraw
    in the same segment, and earlier segments carry earlier progress ticks.
    """
    text = strip_ansi(line.rstrip("\r\n"))
    parts = text.split("\r") if "\r" in text else [text]
    out = []
    for part in parts:
        part = strip_ray_prefix(part)
        if part.strip():
            out.append(part)
    return out
