"""The accelerators under the curves: one line per GPU/NPU, and each host's status.

A line reads ``host:idx  name  util ▂▄█ 97%  mem 17.1/79.6G  63°C  697W``:
a utilisation sparkline of the last ten minutes (min–max per column, so a
dip is not averaged away), memory against its limit, temperature and power.
Unknown values (``[N/A]`` on MIG or consumer cards) show as ``–``, never 0.
Device names and host names are shown literally (Content, not markup).
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from tui.model.accelerators import AcceleratorHistory
from tui.parsers.text import safe_text

_BARS = "▁▂▃▄▅▆▇█"
SPAN_S = 600.0


def _bar(column: tuple[float, float] | None) -> str:
    if column is None:
        return " "
    return _BARS[min(len(_BARS) - 1, max(0, int(column[1] / 100 * len(_BARS))))]


def _num(value: float | None, unit: str, digits: int = 0) -> str:
    return "–" if value is None else f"{value:.{digits}f}{unit}"


class AcceleratorStrip(Widget):
    """Compact per-device lines, and the status of hosts that stopped answering.

    Hidden while no device is known: a machine with no accelerator tool (a
    laptop following a copied log) must not lose a row of an 80×24 screen to
    saying so; ``check`` reports a failing tool on stderr.
    """

    DEFAULT_CSS = """
    AcceleratorStrip {
        height: auto;
        max-height: 10;
        padding: 0 1;
        background: $panel;
        display: none;
    }
    AcceleratorStrip.-shown {
        display: block;
    }
    """

    def __init__(self, history: AcceleratorHistory) -> None:
        super().__init__()
        self.history = history

    def show(self) -> None:
        """Redraw from the history (called when a reading or a status arrived)."""
        self.set_class(bool(self.history.devices()), "-shown")
        self.refresh(layout=True)

    def render(self) -> Content:
        lines: list[Content] = []
        spark_width = 12 if self.size.width >= 90 else 6
        for device in self.history.devices():
            sample = device.latest
            spark = "".join(_bar(c) for c in device.sparkline("util_pct", spark_width, SPAN_S))
            used, total = sample.mem_used_mib, sample.mem_total_mib
            memory = ("–" if used is None else f"{used / 1024:.1f}") + "/" + (
                "–" if total is None else f"{total / 1024:.1f}G")
            place = Content.styled(f"{safe_text(device.host)}:{sample.index} ", "$text-muted")
            readings = Content.assemble(
                ("util ", "$text-muted"), (spark, "$primary"), f" {_num(sample.util_pct, '%'):>4}  ",
                ("mem ", "$text-muted"), f"{memory}  {_num(sample.temp_c, '°C')}  {_num(sample.power_w, 'W')}")
            # The name gets what the line leaves (an H100's "NVIDIA H100 80GB HBM3" whole at
            # 120 columns; it was cut at 18 characters whatever the width), at least 18.
            room = max(18, self.size.width - 2 - place.cell_length - readings.cell_length - 1)
            name = safe_text(sample.name)
            name = name if len(name) <= room else name[:room - 1] + "…"
            lines.append(Content.assemble(place, (f"{name:<{min(room, max(18, len(name)))}} ", "bold"),
                                          readings))
        for host, status in sorted(self.history.status.items()):
            if not status.ok:
                lines.append(Content.assemble((f"{safe_text(host)}: ", "$text-muted"),
                                              (safe_text(status.text), "$text-muted")))
        return Content("\n").join(lines)
