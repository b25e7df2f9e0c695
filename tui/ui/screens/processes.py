"""The ``p`` screen: which processes hold each GPU/NPU, on every host rlwatch watches.

The rows come from the latest accelerator readings (nvidia-smi's compute-apps
query, NVML, npu-smi's process sections) and are rebuilt as new readings
arrive, so a process that ends leaves the table. Every known device has a row,
an idle one saying so, because "which GPU is free" is as much the question as
"who holds GPU 3"; a host whose tool fails is named under the table. Process
names are data from the box: they go into the table as rich ``Text``, never as
markup, through ``safe_text`` (an escape sequence in a name is shown, inert).
"""

from __future__ import annotations

from typing import NamedTuple

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Static

from tui.model.accelerators import AcceleratorHistory, HostStatus
from tui.parsers.smi.records import AcceleratorSample
from tui.parsers.text import safe_text
from tui.ui.messages import RunUpdated
from tui.ui.widgets.key_bar import KeyBar

IDLE = "no processes reported"
NO_ACCELERATOR = "No accelerator known yet: no host has answered nvidia-smi, NVML, npu-smi or rocm-smi."


class ProcessRow(NamedTuple):
    """One line of the table; ``pid`` is None on the line of a device nothing holds."""

    host: str
    device: str
    pid: int | None
    process: str
    memory: str


def process_rows(samples: list[AcceleratorSample]) -> list[ProcessRow]:
    """A row per process, devices in the order given and processes by pid; a row
    saying ``IDLE`` for a device without any."""
    rows = []
    for sample in samples:
        device = f"{sample.index} {sample.name}"
        if not sample.processes:
            rows.append(ProcessRow(sample.host, device, None, IDLE, ""))
        for process in sorted(sample.processes, key=lambda p: p.pid):
            memory = "—" if process.mem_used_mib is None else f"{process.mem_used_mib:,.0f} MiB"
            rows.append(ProcessRow(sample.host, device, process.pid, process.name, memory))
    return rows


def failing_hosts(status: dict[str, HostStatus]) -> list[str]:
    """``host: why`` for each host whose accelerator tool is failing now."""
    return [f"{host}: {state.text}" for host, state in sorted(status.items()) if not state.ok]


class ProcessesScreen(Screen[None]):
    """One row per process on a device (or per idle device); escape goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", tooltip="back to the previous screen")]
    GUIDE = ("A row per process holding a GPU/NPU, from each host's latest reading (nvidia-smi "
             "lists processes every 10 s, npu-smi and NVML with each reading); a device nothing "
             f"holds says \"{IDLE}\". Memory is what the process holds on that device "
             "(— where the tool does not say, as on Windows). Hosts whose tool fails are "
             "listed under the table.")
    DEFAULT_CSS = """
    ProcessesScreen #title { padding: 0 1; background: $panel; }
    ProcessesScreen DataTable { height: 1fr; }
    ProcessesScreen #note { height: auto; max-height: 8; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, accelerators: AcceleratorHistory) -> None:
        super().__init__()
        self.accelerators = accelerators
        self._shown: tuple[list[ProcessRow], list[str]] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(("Processes", "bold"), "  on each GPU/NPU, from the latest "
                                      "reading of every host"), id="title")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Static(id="note")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("host", "device", "pid", "process", "memory")
        self.refresh_rows()
        self.query_one(DataTable).focus()

    def on_run_updated(self, _: RunUpdated) -> None:
        self.refresh_rows()

    def refresh_rows(self) -> None:
        """Show the latest readings' processes (the table is rebuilt only when they changed)."""
        rows = process_rows(self.accelerators.latest())
        failing = failing_hosts(self.accelerators.status)
        if (rows, failing) == self._shown:
            return
        self._shown = rows, failing
        table = self.query_one(DataTable)
        table.clear()
        for row in rows:
            process = Text(safe_text(row.process), style="italic" if row.pid is None else "")
            table.add_row(Text(safe_text(row.host)), Text(safe_text(row.device)),
                          "" if row.pid is None else str(row.pid), process, Text(row.memory))
        note = self.query_one("#note", Static)
        lines = ([] if rows else [NO_ACCELERATOR]) + failing
        note.display = bool(lines)
        note.update(Content("\n".join(safe_text(line) for line in lines)))
