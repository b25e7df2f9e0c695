"""Keypress to redrawn screen over the whole set of keys a user presses, at a real terminal.

``ui_latency.py`` times ``?`` alone; a user walks the screens. This script
types a loop of keys that goes through every screen and back to the
dashboard — panel arrows, ``?``, ``s``, ``j``/``k``, ``enter``, ``[``/``]``,
the step detail's tab keys, ``c`` and its arrows, ``f``, ``esc`` — on the real
app in a child process on a pseudo-terminal (the same harness as
``ui_latency.py``), each key timed from the write to the last byte of the
redrawn screen. Keys are grouped as the targets are: navigation (≤ 50 ms
p95) and opening or leaving a screen (≤ 100 ms p95).

``esc`` is a lone ESC byte: a terminal app cannot tell it from the start of
an escape sequence until ESCDELAY passes (Textual's default 100 ms; rlwatch
sets 25 ms unless the user set one), so that wait is part of its figure.

    python bench/ui_keys.py [STEPS] [ROUNDS] [TIMES.json]

With a third argument every key's times are written there too, so runs of two
versions taken in turn can be pooled and compared.
"""

from __future__ import annotations

import json
import os
import select
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row  # noqa: E402
from bench.ui_latency import app_on_terminal, p95  # noqa: E402

# Opening a screen for the first time composes it: Textual writes a few bytes at once
# (13), then nothing for as long as composing takes, then the frame. Output smaller than
# this is not the key's screen yet, however long the silence after it.
FRAME_MIN_BYTES = 64
# The baseline: the same keys on a run this long (on an empty run ``enter``, ``[``/``]``,
# the tab keys and the chart's arrows have nothing to show and draw nothing).
BASELINE_STEPS = 10

# (label, bytes typed, group): one loop through every screen, back on the dashboard. Each key
# changes the screen (the chart opens on its newest point, so ← comes before →).
ESC = b"\x1b"
LOOP: list[tuple[str, bytes, str]] = [
    ("→ panel", b"\x1b[C", "nav"), ("← panel", b"\x1b[D", "nav"),
    ("? help", b"?", "open"), ("? close", b"?", "open"),
    ("s steps", b"s", "open"), ("j", b"j", "nav"), ("k", b"k", "nav"),
    ("enter detail", b"\r", "open"), ("[", b"[", "nav"), ("]", b"]", "nav"),
    ("l log tab", b"l", "nav"), ("m metrics tab", b"m", "nav"),
    ("esc → steps", ESC, "open"), ("esc → dashboard", ESC, "open"),
    ("c chart", b"c", "open"), ("← cursor", b"\x1b[D", "nav"), ("→ cursor", b"\x1b[C", "nav"),
    ("esc → dashboard", ESC, "open"),
    ("f findings", b"f", "open"), ("esc → dashboard", ESC, "open"),
]


def settle(fd: int, limit: float = 180.0) -> None:
    """Wait until the app only ticks its clock: the rules judge a 100,000-step run in 30 ms
    slices and redraw the panels between them, which a key typed meanwhile would be timed
    against. Settled is 1.5 s in which less than one header redraw's worth (4 kB) came."""
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        got, window = 0, time.perf_counter() + 1.5
        while (left := window - time.perf_counter()) > 0:
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                got += len(os.read(fd, 1 << 16))
        if got < 4000:
            return


def key_times(steps: int, rounds: int) -> dict[str, list[float]]:
    """Latencies (s) of each key of LOOP, ``rounds`` times round."""
    times: dict[str, list[float]] = {label: [] for label, _, _ in LOOP}
    with app_on_terminal(steps, 180) as (fd, terminal):
        settle(fd)
        for _ in range(rounds):
            for label, key, _ in LOOP:
                if terminal.wait_for_output(1.2):  # the header's once-a-second redraw
                    terminal.read_until_quiet()
                start = time.perf_counter()
                os.write(fd, key)
                # Wait for the first byte however long it takes: a slow key counts in
                # full (one slower than the header's next redraw runs into it and counts a
                # little long), never dropped. Every key of LOOP draws something.
                if not terminal.wait_for_output(10.0):
                    continue
                before = terminal.bytes_read
                end = terminal.read_until_quiet()
                while (terminal.bytes_read - before < FRAME_MIN_BYTES
                       and terminal.wait_for_output(10.0)):
                    end = terminal.read_until_quiet()
                if end is not None:
                    times[label].append(end - start)
    return times


def labels_of(group: str) -> list[str]:
    """The labels of ``group``'s keys, each once: ``esc → dashboard`` comes three times a
    loop and keeps all its times under the one label, which the figures before 2026-11-28 counted three
    times over (of 4 rounds' 40 screen presses, 64 were pooled, 36 of them that esc)."""
    return list(dict.fromkeys(label for label, _, g in LOOP if g == group))


def rows(steps: int = 100_000, rounds: int = 5) -> list[Row]:
    empty = key_times(BASELINE_STEPS, rounds)
    full = key_times(steps, rounds)
    out = []
    for group, target in (("nav", 0.050), ("open", 0.100)):
        labels = labels_of(group)
        got = [t for label in labels for t in full[label]]
        base = [t for label in labels for t in empty[label]]
        what = ("navigation keys (arrows, j/k, [/], tab keys)" if group == "nav"
                else "opening or leaving a screen (s, f, c, ?, enter, esc)")
        out.append(Row(f"keypress → redrawn at the terminal, {what}, {steps:,} steps × 150 metrics, p95",
                       f"{p95(got) * 1000:.0f} ms (median {statistics.median(got) * 1000:.0f} ms, "
                       f"{len(got)} presses)",
                       f"same keys on a {BASELINE_STEPS}-step run {p95(base) * 1000:.0f} ms",
                       f"≤ {target * 1000:.0f} ms",
                       p95(got) <= target))
    return out


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    full = key_times(steps, rounds)
    if len(sys.argv) > 3:
        Path(sys.argv[3]).write_text(json.dumps(full))
    for label, values in full.items():
        if values:
            print(f"{label:18} median {statistics.median(values) * 1000:6.0f} ms  "
                  f"max {max(values) * 1000:6.0f} ms  n={len(values)}")
    for group, target in (("nav", 50), ("open", 100)):
        got = [t for label in labels_of(group) for t in full[label]]
        print(f"{group}: p95 {p95(got) * 1000:.0f} ms, median {statistics.median(got) * 1000:.0f} ms "
              f"(target {target} ms)")
