"""Durations in words, the one way rlwatch says "how long" in a sentence.

A finding, a note or a status line is read by a person deciding whether to
act: ``45 s``, ``13 min``, ``2 h 05 min``, ``3 d 4 h`` say it at the
precision that decision needs. Minutes alone would say "0 min" for a short
stall a test or a fast run raises, and seconds alone make two hours a number
to divide. Pure and free of any UI import, so the rules can use it.
(The header's narrow columns keep their own compact form, ``4m05s``:
:func:`tui.ui.format.format_duration`.)
"""

from __future__ import annotations

import math


def word_duration(seconds: float) -> str:
    """``seconds`` as ``under 1 s``, ``45 s``, ``13 min``, ``2 h 05 min`` or ``3 d 4 h`` (rounded down:
    a run quiet for 59 s has not been quiet for a minute); ``?`` for a negative or
    non-finite duration, which only a confused clock produces."""
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    total = int(seconds)
    if 0 < seconds < 1:  # a CPU run's step, a tiny save: '0 s' read as nothing at all
        return "under 1 s"
    if total < 60:
        return f"{total} s"
    if total < 3600:
        return f"{total // 60} min"
    days, rest = divmod(total, 86400)
    hours, minutes = rest // 3600, rest % 3600 // 60
    return f"{days} d {hours} h" if days else f"{hours} h {minutes:02d} min"
