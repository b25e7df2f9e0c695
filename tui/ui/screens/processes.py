"""The ``p`` screen: which processes hold each GPU/NPU, on every host rlwatch watches.

The rows come from the latest accelerator readings (nvidia-smi's compute-apps
query, NVML, npu-smi's process sections) and are rebuilt as new readings
arrive, so a process that ends leaves the table. Process names are data from
the box: they go into the table as rich ``Text``, never as markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui.model.accelerators import AcceleratorHistory
from tui.parsers.smi.records import AcceleratorSample

# Readings come every 2 s; the table looks this often whether they changed.
REFRESH_SECONDS = 2.0


def process_rows(samples: list[AcceleratorSample]) -> list[tuple[str, str, int, str, str]]:
    """(host, device, pid, process, memory) per process, devices in the order given, then by pid."""
    rows = []
    for sample in samples:
        device = f"{sample.index} {sample.name}"
        for process in sorted(sample.processes, key=lambda p: p.pid):
            memory = "—" if process.mem_used_mib is None else f"{process.mem_used_mib:,.0f} MiB"
            rows.append((sample.host, device, process.pid, process.name, memory))
    return rows


class ProcessesScreen(Screen[None]):
    """One row per process on a device; escape goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", tooltip="back to the dashboard")]
    DEFAULT_CSS = """
    ProcessesScreen #title { padding: 0 1; background: $panel; }
    ProcessesScreen DataTable { height: 1fr; }
    ProcessesScreen #empty { padding: 1 1; color: $text-muted; }
    """

    def __init__(self, accelerators: AcceleratorHistory) -> None:
        super().__init__()
        self.accelerators = accelerators
        self._shown: list[tuple[str, str, int, str, str]] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(("Processes", "bold"), "  on each GPU/NPU, from the latest "
                                      "reading of every host"), id="title")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Static(id="empty")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("host", "device", "pid", "process", "memory")
        self.refresh_rows()
        self.set_interval(REFRESH_SECONDS, self.refresh_rows)
        self.query_one(DataTable).focus()

    def refresh_rows(self) -> None:
        """Show the latest readings' processes (the table is rebuilt only when they changed)."""
        samples = self.accelerators.latest()
        rows = process_rows(samples)
        if rows == self._shown:
            return
        self._shown = rows
        table = self.query_one(DataTable)
        table.clear()
        for host, device, pid, name, memory in rows:
            table.add_row(Text(host), Text(device), str(pid), Text(name), memory)
        empty = self.query_one("#empty", Static)
        empty.display = not rows
        empty.update(Content(
            "No accelerator is known yet: no host has answered nvidia-smi, NVML or npu-smi."
            if not samples else "No processes reported on any device."))
