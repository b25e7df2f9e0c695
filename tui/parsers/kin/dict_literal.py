"""Reading a printed dict: ``{'loss': 0.1, 'x': '5/30'}`` (Python) or ``{"loss": 0.1}`` (JSON).

The kin trainers print their metrics as the ``str()`` of a dict or as JSON;
either may be cut (a 4,096-byte capture, a pasted excerpt), hard-wrapped by a
terminal, glued to a tqdm bar, or followed by another dict on the same line.
This reader walks the text once, never raises, says whether the dict was
closed, and marks an unquoted value that ran into the end of the text as
``cut``, so a caller drops exactly the item that may have lost digits.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.parsers.kin.values import kin_value

_QUOTES = "'\""
_OPEN = "([{"
_CLOSE = ")]}"


@dataclass(slots=True)
class Item:
    """One ``key: value`` of a printed dict; ``quoted`` when the value was a string.

    ``cut`` when an unquoted value ran to the end of the text with no ``,`` or
    ``}`` after it: the text may have been cut inside it (``0.08838834`` of
    ``0.0883883461356163``), so it is not to be trusted.
    """

    key: str
    value: str
    quoted: bool
    cut: bool = False


@dataclass(slots=True)
class PrintedDict:
    """The items of one printed dict, where it started and ended in the text."""

    items: list[Item]
    start: int
    end: int
    closed: bool


def _quoted(text: str, at: int) -> int:
    """Index just past the string literal opening at ``at`` (len(text) if unterminated)."""
    quote = text[at]
    pos = at + 1
    while pos < len(text):
        char = text[pos]
        if char == "\\":
            pos += 2
            continue
        if char == quote:
            return pos + 1
        pos += 1
    return len(text)


def _bare_value_end(text: str, at: int) -> int:
    """Index where an unquoted value starting at ``at`` ends: a top-level ``,`` or ``}``."""
    depth = 0
    pos = at
    while pos < len(text):
        char = text[pos]
        if char in _QUOTES:
            pos = _quoted(text, pos)
            continue
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            if depth == 0:
                return pos
            depth -= 1
        elif char == "," and depth == 0:
            return pos
        pos += 1
    return pos


def read_items(text: str, at: int = 0, stop_at_close: bool = True) -> tuple[list[Item], int, bool]:
    """Read ``'key': value`` items from ``at``; (items, index reached, closed by ``}``).

    With ``stop_at_close`` False the reader also accepts a fragment with no
    braces at all (a pretty-printed dict's middle line).
    """
    items: list[Item] = []
    pos = at
    size = len(text)
    while pos < size:
        while pos < size and text[pos] in " \t,":
            pos += 1
        if pos >= size:
            break
        char = text[pos]
        if char == "}":
            return items, pos + 1, True
        if char not in _QUOTES:
            break  # not a key: the dict is over (or was never one)
        key_end = _quoted(text, pos)
        if key_end >= size or text[key_end - 1] != char:
            break  # a key cut off at the end of the text
        key = text[pos + 1:key_end - 1]
        pos = key_end
        while pos < size and text[pos] == " ":
            pos += 1
        if pos >= size or text[pos] != ":":
            break
        pos += 1
        while pos < size and text[pos] == " ":
            pos += 1
        if pos >= size:
            break
        if text[pos] in _QUOTES:
            value_end = _quoted(text, pos)
            if text[value_end - 1] != text[pos] or value_end - 1 == pos:
                break  # an unterminated string: cut
            items.append(Item(key, text[pos + 1:value_end - 1], True))
        elif text[pos] == "{":
            nested, value_end, closed = read_items(text, pos + 1)
            if not closed:
                break
            items.extend(Item(f"{key}/{item.key}", item.value, item.quoted, item.cut) for item in nested)
        else:
            value_end = _bare_value_end(text, pos)
            items.append(Item(key, text[pos:value_end].strip(), False, cut=value_end >= size))
        pos = value_end
        if not stop_at_close and pos >= size:
            break
    return items, pos, False


def printed_dicts(text: str) -> tuple[str, list[PrintedDict]]:
    """Split ``text`` into a leading fragment (no ``{``) and the dicts that follow.

    The fragment is what a hard-wrapped line carries over from the previous
    row (``p/max_steps': '33/94', …}``); each dict starts at a ``{`` that is
    followed by a quoted key.
    """
    dicts: list[PrintedDict] = []
    first = _next_dict(text, 0)
    lead = text if first < 0 else text[:first]
    pos = first
    while pos >= 0:
        items, end, closed = read_items(text, pos + 1)
        dicts.append(PrintedDict(items, pos, end, closed))
        pos = _next_dict(text, max(end, pos + 1))
    return lead, dicts


def _next_dict(text: str, at: int) -> int:
    while True:
        pos = text.find("{", at)
        if pos < 0:
            return -1
        nxt = pos + 1
        while nxt < len(text) and text[nxt] == " ":
            nxt += 1
        if nxt < len(text) and text[nxt] in _QUOTES:
            return pos
        at = pos + 1


def dict_metrics(text: str, at: int) -> tuple[dict[str, float], int]:
    """The numbers of the dict whose items start at ``text[at]``, and how many items were
    dropped: cut off by the end of the line, or unreadable where a number belongs (a
    quoted string is a label, not a dropped value)."""
    read, _, _ = read_items(text, at)
    metrics: dict[str, float] = {}
    dropped = 0
    for item in read:
        value = None if item.cut else kin_value(item.value)
        if value is None:
            dropped += item.cut or not item.quoted
            continue
        metrics[item.key] = value
    return metrics, dropped
