"""Local NVIDIA GPUs through NVML (nvidia-ml-py's ``pynvml``), no subprocess at all.

NVML is what nvidia-smi itself calls, so the readings match it; each poll is a
few library calls in a worker thread instead of starting a program. ``pynvml``
is imported on first use only, so ``rlwatch --help`` and non-NVIDIA hosts never
load it. Memory uses the v2 call where the driver has it: its ``used``
excludes the driver's reserved memory, as nvidia-smi's ``memory.used`` does
since R510 (v1 counts reserved memory as used: ~0.5 GiB on an idle H100).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncGenerator, Callable
from types import ModuleType
from typing import TypeVar

from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample
from tui.sources.accelerators.poller import PollerError
from tui.sources.accelerators.runner import ToolMissing

TOOL = "NVML"
_MIB = 1024 * 1024
T = TypeVar("T")


def _text(value: str | bytes) -> str:
    """pynvml returns str in new releases and bytes in old ones."""
    return value.decode(errors="replace") if isinstance(value, bytes) else value


class NvmlPoller:
    """All local NVIDIA GPUs, read through NVML every ``interval`` seconds."""

    tool = TOOL

    def __init__(self, interval: float = 2.0, nvml: ModuleType | None = None) -> None:
        self.interval = interval
        self._nvml = nvml  # tests hand in a stand-in; normally imported on first use
        self._ready = False
        self._names: dict[int, str] = {}

    def _library(self) -> ModuleType:
        if self._nvml is None:
            try:
                self._nvml = importlib.import_module("pynvml")
            except ImportError:
                raise ToolMissing("pynvml") from None
        return self._nvml

    def _optional(self, call: Callable[[], T]) -> T | None:
        """A reading the device may not support (utilisation under MIG, power on some
        boards): None rather than a failed poll."""
        try:
            return call()
        except self._library().NVMLError:
            return None

    def _memory(self, handle: object) -> tuple[float | None, float | None]:
        nvml = self._library()
        info = None
        if hasattr(nvml, "nvmlMemory_v2"):
            try:
                info = nvml.nvmlDeviceGetMemoryInfo(handle, version=nvml.nvmlMemory_v2)
            except (nvml.NVMLError, TypeError):  # an old driver without the _v2 call
                info = None
        info = info or self._optional(lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
        return (None, None) if info is None else (info.used / _MIB, info.total / _MIB)

    def _temperature(self, handle: object) -> float | None:
        nvml = self._library()
        if hasattr(nvml, "nvmlDeviceGetTemperatureV"):
            value = self._optional(lambda: nvml.nvmlDeviceGetTemperatureV(handle, nvml.NVML_TEMPERATURE_GPU))
            if value is not None:
                return float(value)
        value = self._optional(lambda: nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))
        return None if value is None else float(value)

    def _process_name(self, pid: int) -> str:
        if pid not in self._names:
            name = self._optional(lambda: self._library().nvmlSystemGetProcessName(pid))
            self._names[pid] = _text(name) if name else ""
        return self._names[pid]

    def _processes(self, handle: object, index: int, uuid: str | None) -> tuple[AcceleratorProcess, ...]:
        found = self._optional(lambda: self._library().nvmlDeviceGetComputeRunningProcesses(handle)) or []
        return tuple(AcceleratorProcess(
            pid=process.pid, name=self._process_name(process.pid),
            mem_used_mib=None if process.usedGpuMemory is None else process.usedGpuMemory / _MIB,
            device_uuid=uuid, device_index=index) for process in found)

    def _read(self) -> list[AcceleratorSample]:
        """One reading of every GPU (blocking; run in a thread)."""
        nvml = self._library()
        try:
            if not self._ready:
                nvml.nvmlInit()
                self._ready = True
            count = nvml.nvmlDeviceGetCount()
            handles = [nvml.nvmlDeviceGetHandleByIndex(index) for index in range(count)]
        except nvml.NVMLError as error:
            if getattr(error, "value", None) == getattr(nvml, "NVML_ERROR_LIBRARY_NOT_FOUND", object()):
                raise ToolMissing("libnvidia-ml") from None  # no NVIDIA driver here at all
            raise PollerError(f"{TOOL}: {error}") from None
        if not handles:
            raise PollerError(f"{TOOL}: no NVIDIA devices found")
        samples = []
        for index, handle in enumerate(handles):
            uuid = self._optional(lambda: _text(nvml.nvmlDeviceGetUUID(handle)))
            used, total = self._memory(handle)
            util = self._optional(lambda: nvml.nvmlDeviceGetUtilizationRates(handle))
            power_mw = self._optional(lambda: nvml.nvmlDeviceGetPowerUsage(handle))
            pci = self._optional(lambda: nvml.nvmlDeviceGetPciInfo(handle))
            samples.append(AcceleratorSample(
                host="", index=index, uuid=uuid,
                name=self._optional(lambda: _text(nvml.nvmlDeviceGetName(handle))) or f"GPU {index}",
                util_pct=None if util is None else float(util.gpu),
                mem_used_mib=used, mem_total_mib=total,
                temp_c=self._temperature(handle),
                power_w=None if power_mw is None else power_mw / 1000.0,
                processes=self._processes(handle, index, uuid),
                bus_id=None if pci is None else _text(pci.busId),
            ))
        return samples

    async def read_once(self) -> list[AcceleratorSample]:
        return await asyncio.to_thread(self._read)

    async def follow(self) -> AsyncGenerator[list[AcceleratorSample], None]:
        while True:
            await asyncio.sleep(self.interval)
            yield await self.read_once()

    async def close(self) -> None:
        if self._ready:
            self._ready = False
            self._optional(self._library().nvmlShutdown)
