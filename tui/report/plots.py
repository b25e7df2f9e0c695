"""Terminal line charts of a run's series, drawn with plotext (text, no colour codes).

The same text goes to the terminal, into Markdown code blocks and into the
HTML page's ``<pre>``, so every output shows the same picture.
"""

from __future__ import annotations

import math

from tui.parsers.text import strip_ansi

WIDTH, HEIGHT = 72, 14


def line_chart(title: str, steps: list[int], values: list[float],
               width: int = WIDTH, height: int = HEIGHT) -> str:
    """A braille line chart of ``values`` over ``steps`` (non-finite points left out)."""
    import plotext as plt

    points = [(s, v) for s, v in zip(steps, values) if math.isfinite(v)]
    if not points:
        return f"{title}: no finite values"
    plt.clear_figure()
    plt.plotsize(width, height)
    plt.theme("clear")
    plt.title(title)
    plt.xlabel("step")
    xs, ys = zip(*points)
    plt.plot(list(xs), list(ys), marker="braille")
    chart = strip_ansi(plt.build())
    plt.clear_figure()
    return "\n".join(line.rstrip() for line in chart.splitlines())
