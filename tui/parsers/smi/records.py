"""What every accelerator grammar produces, whatever the vendor or tool.

One ``AcceleratorSample`` per device (a GPU, an NPU chip or die), so the model,
the rules and ``check --json`` never need to know which tool was read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace


class SmiFormatError(ValueError):
    """Text that holds no readings: a tool's failure message, junk, a cut-off table.

    The message is one line fit for a status bar, e.g. ``nvidia-smi: no NVIDIA
    devices found``; callers show it instead of a traceback.
    """


@dataclass(frozen=True, slots=True)
class AcceleratorProcess:
    """A process holding device memory.

    nvidia-smi's compute-apps query names the device by UUID; tables name it by
    index (and npu-smi by NPU id and chip), so both are optional.
    """

    pid: int
    name: str
    mem_used_mib: float | None
    device_uuid: str | None = None
    device_index: int | None = None


@dataclass(frozen=True, slots=True)
class AcceleratorSample:
    """One device's reading. Unknown values are None, never 0.

    ``index`` is the number users type (``CUDA_VISIBLE_DEVICES``; on Ascend the
    chip's logical or physical id where the table prints one, else the NPU id).
    ``npu_id``/``chip_id`` locate an Ascend die on its card (an A3 NPU has two).
    """

    host: str
    index: int
    uuid: str | None
    name: str
    util_pct: float | None
    mem_used_mib: float | None
    mem_total_mib: float | None
    temp_c: float | None
    power_w: float | None
    processes: tuple[AcceleratorProcess, ...] = ()
    bus_id: str | None = None
    npu_id: int | None = None
    chip_id: int | None = None

    @property
    def key(self) -> str:
        """Identity within a host: the UUID where the tool has one (indices can be
        renumbered by a reboot or ``CUDA_DEVICE_ORDER``), else the index."""
        return self.uuid or f"#{self.index}"

    def to_json(self) -> dict[str, object]:
        """The ``check --json`` object for this device (a documented contract)."""
        return {
            "host": self.host,
            "index": self.index,
            "uuid": self.uuid,
            "name": self.name,
            "util_pct": self.util_pct,
            "mem_used_mib": self.mem_used_mib,
            "mem_total_mib": self.mem_total_mib,
            "temp_c": self.temp_c,
            "power_w": self.power_w,
        }


def on_host(samples: Iterable[AcceleratorSample], host: str) -> list[AcceleratorSample]:
    """The samples labelled with the host they were read on (grammars leave it blank)."""
    return [replace(sample, host=host) for sample in samples]


def with_processes(samples: Iterable[AcceleratorSample],
                   processes: Iterable[AcceleratorProcess]) -> list[AcceleratorSample]:
    """Give each device exactly the processes that name it (by UUID, else by index);
    a device none name gets an empty tuple, since its earlier processes ended."""
    by_uuid: dict[str, list[AcceleratorProcess]] = {}
    by_index: dict[int, list[AcceleratorProcess]] = {}
    for process in processes:
        if process.device_uuid is not None:
            by_uuid.setdefault(process.device_uuid, []).append(process)
        elif process.device_index is not None:
            by_index.setdefault(process.device_index, []).append(process)
    result = []
    for sample in samples:
        found = by_uuid.get(sample.uuid, []) if sample.uuid else []
        found = found + by_index.get(sample.index, [])
        result.append(replace(sample, processes=tuple(found)))
    return result
