"""Metric values as the kin trainers print them, on top of verl's spellings.

``parse_value`` (tui.parsers.values) reads what verl prints. The kin add:
quoted numbers (transformers >= 4.57 formats every logged value as a string,
``'loss': '0.3713'``; JSON lines quote nothing but their strings), YAML's
``.nan``/``.inf``/``-.inf`` (EasyR1's console logger dumps YAML), a torch
``tensor(0.5, device='cuda:0')`` printed as is, and units glued to a number
(``12.34s``, ``3.2%``) where a grammar says the unit is known.
"""

from __future__ import annotations

import re

from tui.parsers.values import parse_value

_YAML_SPECIAL = {".nan": float("nan"), ".inf": float("inf"), "+.inf": float("inf"),
                 "-.inf": float("-inf")}
_TENSOR = re.compile(r"tensor\(\s*([^,()]+)")


def kin_value(text: str) -> float | None:
    """The number ``text`` stands for, or None (a word, a path, a cut value)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    value = parse_value(text)
    if value is not None:
        return value
    special = _YAML_SPECIAL.get(text.lower())
    if special is not None:
        return special
    if text.startswith("tensor("):
        match = _TENSOR.match(text)
        return parse_value(match.group(1)) if match else None
    return None


def number_with_unit(text: str, unit: str) -> float | None:
    """``12.34s`` with ``unit='s'`` gives 12.34; anything else None."""
    text = text.strip()
    if not text.endswith(unit):
        return None
    return parse_value(text[: len(text) - len(unit)])
