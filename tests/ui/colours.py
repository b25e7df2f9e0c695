"""Colour arithmetic for the theme tests: what a colour becomes in a 256- or 16-colour
terminal, how legible text is on a background, and how a colour looks to a
colour-blind reader.

Each is a published formula, so the tests can say "readable" and "distinct"
with numbers instead of comparing stored screenshots nobody can review.
"""

from __future__ import annotations

import math

from rich.color import Color as RichColor
from rich.color import ColorSystem

RGB = tuple[int, int, int]

# Rich's names for the colour systems Textual writes in (it downgrades exactly so).
SYSTEMS = {"truecolor": ColorSystem.TRUECOLOR, "256": ColorSystem.EIGHT_BIT,
           "16": ColorSystem.STANDARD}

# Machado, Oliveira & Fernandes (2009), severity 1.0, on linear RGB.
_CVD = {
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
}
CVD_KINDS = tuple(_CVD)


def parse(hex_colour: str) -> RGB:
    """``#RRGGBB`` as a triple."""
    text = hex_colour.lstrip("#")
    return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)


def downgrade(rgb: RGB, system: str) -> RGB:
    """The colour a terminal with ``system`` colours shows for ``rgb`` (Rich's mapping)."""
    colour = RichColor.from_rgb(*rgb).downgrade(SYSTEMS[system])
    return tuple(colour.get_truecolor())


def palette_index(rgb: RGB, system: str) -> int | None:
    """The palette number ``rgb`` is written as (None in truecolor)."""
    return RichColor.from_rgb(*rgb).downgrade(SYSTEMS[system]).number


def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _encode(value: float) -> int:
    value = min(1.0, max(0.0, value))
    c = value * 12.92 if value <= 0.0031308 else 1.055 * value ** (1 / 2.4) - 0.055
    return round(c * 255)


def luminance(rgb: RGB) -> float:
    """WCAG relative luminance."""
    r, g, b = (_linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(foreground: RGB, background: RGB) -> float:
    """WCAG contrast ratio, 1 (none) to 21 (black on white); body text wants 4.5."""
    high, low = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def lab(rgb: RGB) -> tuple[float, float, float]:
    """CIE L*a*b* (D65)."""
    r, g, b = (_linear(c) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def chroma(rgb: RGB) -> float:
    """How coloured (as opposed to grey) ``rgb`` is: 0 for a grey."""
    _, a, b = lab(rgb)
    return math.hypot(a, b)


def delta_e(one: RGB, other: RGB) -> float:
    """CIE76 colour difference: about 2.3 is just noticeable, 20+ is clearly different."""
    return math.dist(lab(one), lab(other))


def simulate(rgb: RGB, kind: str) -> RGB:
    """``rgb`` as seen with ``kind`` colour blindness (full severity)."""
    linear = [_linear(c) for c in rgb]
    return tuple(_encode(sum(m * c for m, c in zip(row, linear))) for row in _CVD[kind])
