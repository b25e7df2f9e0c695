"""Reading one value as the smi tools print it, shared by every grammar.

nvidia-smi, npu-smi, rocm-smi and amd-smi all print numbers with optional units
and mark what they cannot read with a placeholder: ``[N/A]``, ``N/A``, ``NA``,
``-``, ``[Not Supported]``, ``[Requested functionality has been deprecated]``,
``[Unknown Error]``, ``[GPU is lost]``…  A placeholder is "unknown" (None), never
zero: an idle GPU and a GPU whose utilisation cannot be read must look different.
"""

from __future__ import annotations

import math
import re

# One number, optionally followed by a unit; the unit is dropped (callers know
# which unit their column uses and convert where the tool's unit differs).
_NUMBER = re.compile(r"\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*([A-Za-z%°]*)\s*")
_UNKNOWN_WORDS = {"", "-", "--", "na", "n/a", "none", "unknown", "not supported", "not available"}


def is_unknown(text: str) -> bool:
    """True for the placeholders a tool prints instead of a value.

    Anything in square brackets is a placeholder in nvidia-smi (``[N/A]``,
    ``[Not Supported]``, ``[Requested functionality has been deprecated]``,
    ``[Insufficient Permissions]``…), whatever new wording a driver brings.
    """
    text = text.strip()
    return text.lower() in _UNKNOWN_WORDS or (text.startswith("[") and text.endswith("]"))


def number(text: str | None) -> float | None:
    """The number in ``text`` (``"432W"``, ``"31859 MiB"``, ``" 7 %"``), or None.

    None for placeholders, for text that is not one number, and for NaN or
    infinity (no smi tool means those as readings).
    """
    if text is None or is_unknown(text):
        return None
    match = _NUMBER.fullmatch(text)
    if match is None:
        return None
    value = float(match.group(1))
    return value if math.isfinite(value) else None


def integer(text: str | None) -> int | None:
    """An integer field (an index, a PID), or None if it is not a whole number."""
    value = number(text)
    return int(value) if value is not None and value == int(value) else None


def cells(line: str) -> list[str]:
    """The ``|``-separated cells of a table row, stripped, without the outer borders."""
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [cell.strip() for cell in line.split("|")]


def is_rule(line: str) -> bool:
    """A table's horizontal rule (``+----+``, ``|====|``, ``+===+``)."""
    stripped = line.strip()
    return bool(stripped) and set(stripped) <= set("+-=|")


def text_of(data: bytes | str) -> str:
    """Decode tool output; undecodable bytes become U+FFFD instead of raising."""
    return data if isinstance(data, str) else data.decode("utf-8", errors="replace")
