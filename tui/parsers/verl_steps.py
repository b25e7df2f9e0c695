"""verl's console step lines: ``step:N - key:value - key:value …``.

verl's ``LocalLogger`` prints one line per ``Tracking.log`` call. The line may
sit after a Ray prefix, after colour codes, or glued to the end of a tqdm bar
(``…7.48s/it]step:4 - …``); ``training/global_step:34`` inside a line is a
metric, not a step line.
"""

from __future__ import annotations

import json
import json.scanner
import re

from tui.parsers.values import parse_value

# ``step:`` not preceded by a word character or ``/`` (that would be
# ``global_step:`` or ``training/global_step:``).
_STEP = re.compile(r"(?:^|(?<=[^\w/]))step:(\d+) - ")
_SEPARATOR = " - "
# A numpy-wrapped value (``:np.float64(0.5)`` up to the next separator), for
# ``_plain_items`` to unwrap; the inner text has no colon, space or parenthesis.
_WRAPPED_VALUE = re.compile(r"(?<=:)np\.\w+\(([^()\s:]*)\)(?= - |\Z)")
# A plain line read as JSON (``_plain_items``): whole numbers as floats, like the rest. The
# decoder's scanner itself, (text, start) → (value, end): ``JSONDecoder.decode`` wraps it in
# two regex matches for the whitespace around the value, a tenth of a line's reading.
# (typeshed types make_scanner's argument as a scanner; it is the decoder.)
_scan_json = json.scanner.make_scanner(json.JSONDecoder(parse_int=float))  # type: ignore[arg-type]


def find_step(segment: str) -> tuple[int, int] | None:
    """Return (step number, index where the items start) if ``segment`` holds a step line."""
    if "step:" not in segment:
        return None
    match = _STEP.search(segment)
    if match is None:
        return None
    return int(match.group(1)), match.end()


def split_item(item: str) -> tuple[str, float | None] | None:
    """Split ``key:value``; None when the item has no key at all.

    The split is at the *last* colon: values never contain one, while a
    user-named data source in a key might (``val/test_score/hf:gsm8k``).
    """
    key, colon, value = item.rpartition(":")
    key = key.strip()
    if not colon or len(key.split()) != 1:  # one word: not empty, no whitespace inside
        return None
    return key, parse_value(value)


def parse_items(text: str) -> tuple[dict[str, float], int]:
    """Parse the ``key:value - key:value`` tail of a step line.

    Returns the metrics and how many items were unreadable. A repeated key
    keeps its last value, as a dict update in verl would.
    """
    text = text.rstrip()
    if text.endswith(" -"):
        text = text[:-2]
    plain = _plain_items(text)
    if plain is not None:
        return plain, 0
    metrics: dict[str, float] = {}
    dropped = 0
    for item in text.split(_SEPARATOR):
        parsed = split_item(item)
        if parsed is None or parsed[1] is None:
            dropped += 1
            continue
        metrics[parsed[0]] = parsed[1]
    return metrics, dropped


def _plain_items(text: str) -> dict[str, float] | None:
    """The metrics of a line every item of which reads plainly, else None.

    Nearly every step line is ASCII ``key:number`` items (the numbers maybe
    numpy-wrapped) with no other spaces and no colon in a key or value. Such a
    line, with its separators and colons swapped for JSON's, is a JSON object
    that the standard library's C decoder reads with no Python call per item
    (``split_item`` takes a few per item: a fleet's opening parses 20 logs ×
    1,120 lines × ~50 items). What the decoder gives is what ``split_item``
    gives, or the line is None and goes item by item:

    * a number: JSON's numbers are a subset of ``float``'s (whole ones made
      floats by ``parse_int``; its ``NaN`` and ``Infinity`` read as ``float``
      reads them); anything else JSON reads (``true``, ``null``, an object, an
      array, a string: no quote, bracket or brace gets that far) is refused,
      and so is all JSON refuses (a bool, ``1.``, ``.5``, ``1_0``, a cut value);
    * a key: JSON refuses a control character in one and no space gets to it
      (a space around a value is one ``split_item`` strips: refusing it only
      costs the slower way), nor an escape; an empty one is refused;
    * one item a colon: a colon more or less anywhere breaks the JSON, so the
      colons count the items, and a repeated key (fewer keys than colons) is
      left to the item-by-item reading, which counts its unreadable values;
    * the end: a ``}`` in a value closes the object early, and a line that
      does not end where the object does is refused.
    """
    if not text.isascii():
        return None
    if "np." in text:
        text = _WRAPPED_VALUE.sub(r"\1", text)
    # Each a one-character search (memchr): cheaper than any longer pattern.
    if '"' in text or "\\" in text or "{" in text or "[" in text:
        return None
    body = text.replace(_SEPARATOR, ',"')
    if " " in body:
        return None
    whole = '{"' + body.replace(":", '":') + "}"
    try:
        metrics: dict[str, float]
        metrics, end = _scan_json(whole, 0)
    except (ValueError, StopIteration):
        return None
    if (end != len(whole) or len(metrics) != text.count(":") or "" in metrics
            or not all(map(float.__instancecheck__, metrics.values()))):
        return None
    return metrics


def item_is_complete(item: str) -> bool:
    """True when ``item`` reads as a whole ``key:value`` (used to spot hard wraps)."""
    parsed = split_item(item)
    return parsed is not None and parsed[1] is not None
