"""How numbers and durations look on the dashboard.

Panels are narrow (about 18 columns of text at 80×24), so every number is
cut to a few significant digits; the exact values stay in the model and in
``rlwatch check --json``.
"""

from __future__ import annotations

import math

# (smallest magnitude, divisor, suffix): below 10,000 the digits fit as they are.
_SI = ((1e12, 1e12, "T"), (1e9, 1e9, "G"), (1e6, 1e6, "M"), (1e4, 1e3, "k"))


def format_number(value: float, width: int | None = None) -> str:
    """A metric value in at most about seven characters: ``0.981``, ``134.2``, ``176.5k``.
    With ``width``, in fewer significant digits until it fits (a fleet row's cells:
    ``-0.01834`` → ``-0.0183``), never fewer than one."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    magnitude = abs(value)
    divisor, suffix = next(((divisor, suffix) for threshold, divisor, suffix in _SI
                            if magnitude >= threshold), (1.0, ""))
    for digits in range(4, 0, -1):
        text = f"{value / divisor:.{digits}g}{suffix}"
        if width is None or len(text) <= width:
            break
    return text


def format_delta(delta: float) -> str:
    """A change between steps, always signed so a flat ``+0`` reads as a change of nothing."""
    if not math.isfinite(delta):
        return format_number(delta)
    if delta == 0:
        return "±0"
    text = format_number(delta)
    return text if text.startswith("-") else f"+{text}"


def format_duration(seconds: float) -> str:
    """A duration at the precision a human plans by: ``42s``, ``4m05s``, ``3h12m``, ``2d04h``."""
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    total = int(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def format_exact(value: float) -> str:
    """A value where there is room for it (the step detail): eight significant digits,
    enough for every digit verl's console prints and most of a JSONL float64."""
    if not math.isfinite(value):
        return format_number(value)
    return f"{value:.8g}"
