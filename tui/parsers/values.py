"""Metric values as verl prints them, across versions.

v0.1–v0.4 print ``f"{v:.3f}"``; v0.5+ print ``pprint.pformat(v)``, which with
numpy ≥ 2 wraps scalars as ``np.float64(0.5)`` / ``np.int32(2)``. ``True`` and
``False`` pass verl's ``numbers.Number`` filter too.
"""

from __future__ import annotations

import math
import re

_NUMBER = re.compile(
    r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf|infinity)",
    re.IGNORECASE,
)
_WRAPPED = re.compile(r"np\.\w+\((.*)\)")
_BOOLS = {"True": 1.0, "False": 0.0}


def parse_value(text: str) -> float | None:
    """Return the float a printed metric value stands for, or None if it is not one.

    ``None`` (rather than an exception) marks a cut or garbled value: the
    caller drops that item and keeps the rest of the line.
    """
    text = text.strip()
    if "_" not in text:
        # The common case, a plain number: float() reads exactly what _NUMBER
        # admits, except digit-group underscores ("1_000"), kept out above.
        try:
            return float(text)
        except ValueError:
            pass
    if not text:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if text.startswith("np."):
        match = _WRAPPED.fullmatch(text)
        if match is None:
            return None  # ``np.float64(0.12`` — a line cut mid-value
        text = match.group(1).strip()
        if text in _BOOLS:
            return _BOOLS[text]
    if not _NUMBER.fullmatch(text):
        return None
    return float(text)


def format_value(value: float) -> str | float:
    """The JSON form of a value: finite floats as numbers, others as strings."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value
