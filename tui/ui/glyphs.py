"""ASCII stand-ins for the glyphs rlwatch draws, and when to use them.

Sparklines, bars and borders are drawn with Unicode block and box-drawing
characters. A font that lacks them, or a terminal whose locale is not UTF-8,
shows garbage instead (tmux itself replaces every non-ASCII character with
``_`` for such a client). In ASCII mode every character written to the
terminal goes through :func:`to_ascii`, so the whole screen — rlwatch's own
widgets, Textual's footer and scrollbars, log text — stays readable and keeps
its layout: each character is replaced by one of the same width.

Pure and free of Textual, so ``rlwatch status`` can use it too.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

# Sparkline and bar heights, lowest to highest (▁▂▃▄▅▆▇█): each character
# covers more of its cell than the one before, so a column still reads as a
# level without colour.
BAR_LEVELS = "_.-:=+*#"

# Glyphs with an obvious ASCII look-alike of one cell. Box drawing and block
# elements are derived from their Unicode names below.
_NAMED: dict[str, str] = {
    "✖": "X", "✗": "x", "✕": "x", "×": "x", "▲": "!", "✓": "+", "✔": "+",
    "●": "*", "◆": "*", "•": "*", "·": ".", "↻": "~", "…": ".", "‥": ":", "≈": "~",
    "Δ": "d", "°": "o", "—": "-", "–": "-", "“": '"', "”": '"', "‘": "'", "’": "'",
    "←": "<", "→": ">", "↑": "^", "↓": "v", "▶": ">", "◀": "<", "▼": "v", "⏎": "<",
    "≤": "<", "≥": ">", "±": "+", "µ": "u",
}


def _box_drawing(name: str) -> str:
    """Light lines become ``- | +``; heavy and double ones ``= # #``, so a critical
    panel's heavy border stays distinct from a normal one without colour."""
    heavy = "HEAVY" in name or "DOUBLE" in name
    across = "HORIZONTAL" in name or "LEFT" in name or "RIGHT" in name
    down = "VERTICAL" in name or " UP" in name or "DOWN" in name
    if across and not down:
        return "=" if heavy else "-"
    if down and not across:
        return "#" if heavy else "|"
    return "#" if heavy else "+"


def _block_element(char: str, name: str) -> str:
    """Lower eighths map onto :data:`BAR_LEVELS`; thin left/right bars are ``|``."""
    lower = "▁▂▃▄▅▆▇█"
    if char in lower:
        return BAR_LEVELS[lower.index(char)]
    if "LEFT" in name or "RIGHT" in name:
        return "|"
    if "UPPER" in name:
        return "-"
    return "#"


# The dot bits of each of a braille cell's four rows, top to bottom (both columns).
_BRAILLE_ROWS = (0x09, 0x12, 0x24, 0xC0)


def _braille(bits: int) -> str:
    """A line chart's braille cell as the one ASCII mark nearest its dots: ``'`` at the
    top of the cell, ``-`` in the middle, ``.`` at the bottom, ``|`` for a line that
    runs through it; blank for no dot."""
    rows = [row for row, mask in enumerate(_BRAILLE_ROWS) if bits & mask]
    if not rows:
        return " "
    if rows[-1] - rows[0] >= 2:
        return "|"
    middle = sum(rows) / len(rows)
    return "'" if middle < 0.75 else "-" if middle <= 2 else "."


class _AsciiTable(dict):
    """A ``str.translate`` table that works out (and remembers) each character's stand-in."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        self[code] = replacement = _stand_in(char)
        return replacement


def _stand_in(char: str) -> str:
    if char.isascii():
        return char
    if char in _NAMED:
        return _NAMED[char]
    name = unicodedata.name(char, "")
    if name.startswith("BOX DRAWINGS"):
        return _box_drawing(name)
    if 0x2580 <= ord(char) <= 0x259F:
        return _block_element(char, name)
    if 0x2800 <= ord(char) <= 0x28FF:
        return _braille(ord(char) - 0x2800)
    if unicodedata.combining(char):
        return ""  # an accent on the previous character: that one is already shown
    base = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
    if len(base) == 1:
        return base  # é -> e
    # Whatever is left keeps its width, so the columns after it do not move.
    return "?" * (2 if unicodedata.east_asian_width(char) in "WF" else 1)


_TABLE = _AsciiTable()


def to_ascii(text: str) -> str:
    """``text`` with every non-ASCII character replaced by an ASCII one of the same width."""
    return text if text.isascii() else text.translate(_TABLE)


# What Python writes into LC_CTYPE when it coerces a C or POSIX locale
# (PEP 538): the user's own setting is gone, so it says nothing about them.
_COERCED = frozenset({"C.UTF-8", "C.utf8", "UTF-8"})


def locale_is_utf8(environ: Mapping[str, str]) -> bool:
    """Whether the locale says UTF-8, decided the way tmux decides it for a client.

    The first non-empty of ``LC_ALL``, ``LC_CTYPE`` and ``LANG`` must name
    UTF-8. An ``LC_CTYPE`` that Python's own locale coercion wrote is skipped.
    """
    lc_ctype = environ.get("LC_CTYPE", "")
    if lc_ctype in _COERCED and not environ.get("LC_ALL"):
        lc_ctype = ""
    for value in (environ.get("LC_ALL", ""), lc_ctype, environ.get("LANG", "")):
        if value:
            folded = value.upper()
            return "UTF-8" in folded or "UTF8" in folded
    return False


def use_ascii(flag: bool | None, configured: bool | None, environ: Mapping[str, str]) -> bool:
    """ASCII or not: ``--ascii``/``--unicode`` if given, else the settings file's
    ``ascii``, else whenever the locale does not say UTF-8."""
    if flag is not None:
        return flag
    if configured is not None:
        return configured
    return not locale_is_utf8(environ)
