"""The indentation a whole paste shares, which is not part of the log it holds.

A log pasted as a Markdown indented code block (an issue, a forum post, a
README) carries four spaces or a TAB in front of every line; a log quoted in a
docstring or a YAML value carries the block's indentation. Python's traceback
grammar, Ray's prefixes and several kin grammars place meaning at the start of
a line (an exception line is unindented, its source lines are not), so that
shared indentation has to go before any grammar looks, and only it: the
relative indentation inside the log (a traceback's ``  File …`` rows, a YAML
block's nesting) is the log's own.

The shared indentation is the longest run of spaces and TABs that every
non-blank line starts with: one line that starts at column 0 makes it empty,
and a log that was not pasted so stops costing anything at its first line.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Blank lines (a paste may lose their indentation), then the first line's own.
# (A ``\r`` that ends no line is a tqdm redraw: text.)
_FIRST = re.compile(rb"(?:[ \t]*\r?\n)*([ \t]*)(?=[^ \t\r\n]|\r(?!\n))")
_LEADING = re.compile(rb"[ \t]*")


@lru_cache(maxsize=16)
def _other_line(indent: bytes) -> re.Pattern[bytes]:
    """A line that neither starts with ``indent`` nor is blank."""
    return re.compile(rb"\n(?!" + re.escape(indent) + rb")(?![ \t]*(?:\r?\n|\r?\Z))")


def _shared(one: bytes, other: bytes) -> bytes:
    """The longest start ``one`` and ``other`` share."""
    length = 0
    for a, b in zip(one, other):
        if a != b:
            break
        length += 1
    return one[:length]


def common_indent(data: bytes, start: int = 0, end: int | None = None,
                  known: bytes | None = None) -> bytes | None:
    """The indentation every non-blank line of ``data[start:end]`` shares (``start`` is
    a line's start), narrowed from ``known`` (what earlier lines shared; None: no line
    yet). None while no non-blank line has been seen."""
    stop = len(data) if end is None else end
    if known == b"":
        return known
    first = _FIRST.match(data, start, stop)
    if first is None:
        return known  # only blank lines so far
    lead = first.group(1)
    indent = lead if known is None else _shared(known, lead)
    position = first.end()
    while indent:
        other = _other_line(indent).search(data, position, stop)
        if other is None:
            break
        lead = _LEADING.match(data, other.end(), stop).group()  # type: ignore[union-attr]
        indent = _shared(indent, lead)
        position = other.end()
    return indent


def dedent(text: str, indent: str) -> str:
    """``text`` without the shared ``indent`` (a blank line may have less of it)."""
    if not indent:
        return text
    if text.startswith(indent):
        return text[len(indent):]
    return text.lstrip(" \t") if not text.strip() else text
