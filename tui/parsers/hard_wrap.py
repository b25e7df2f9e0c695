"""Re-joining step lines that a user's terminal hard-wrapped before the log was saved.

Logs pasted from a terminal (corpus files 012 and 048) split a 10 kB step line
into rows of exactly the terminal's width, cutting keys and numbers
(``actor`` / ``/entropy:0.34``, ``…0.0361111062102847`` / ``6 - val-aux…``).
Parsing the rows separately would invent keys and truncate values, so the
rows are joined back first.

A following row continues the line when all of these hold:

* the rows so far are all (nearly) the same width, at least 80 columns and
  at most 1024 (terminal widths; unwrapped verl step lines are longer);
* the row does not start like a new record (a Ray prefix, colour code,
  a bracketed tag), holds no step line, and its first fragment (up to
  `` - ``) has no spaces, as no key or value has;
* the split is visibly mid-item: the text so far ends in an incomplete
  item, or the row's first fragment is not a ``key:value`` on its own;
* more items follow in the row, or the row is the single-token tail of a
  chain of two or more full-width rows.
"""

from __future__ import annotations

import re

from tui.parsers.verl_steps import find_step, item_is_complete

MIN_WIDTH = 80
MAX_WIDTH = 1024
# Rows of one wrapped line differ by a column or two where a wide glyph or a
# trailing space fell at the edge (048 has one 213-column row among 214s).
_WIDTH_SLACK = 2
_NEW_RECORD = re.compile(r"^(?:\(|\x1b|\[|step:\d|Training Progress|\s*$)")


def may_be_wrapped(first_row: str) -> bool:
    """Could this step row be the first of a terminal-wrapped line?"""
    return MIN_WIDTH <= len(first_row) <= MAX_WIDTH


def continues(joined: str, last_row: str, width: int, rows: int, candidate: str) -> bool:
    """Does ``candidate`` continue the wrapped line built so far from ``rows`` rows?"""
    if abs(len(last_row) - width) > _WIDTH_SLACK:
        return False  # the previous row was not full-width: the line ended there
    if not candidate or _NEW_RECORD.match(candidate):
        return False
    head, sep, _ = candidate.partition(" - ")
    if any(char.isspace() for char in head) or find_step(candidate) is not None:
        return False  # a fragment of an item has no spaces; a step line is new
    tail = joined.rsplit(" - ", 1)[-1]
    if item_is_complete(tail) and item_is_complete(head):
        return False  # both sides whole: an ordinary next line, not a wrap
    return bool(sep) or (rows >= 2 and " " not in candidate.strip())
