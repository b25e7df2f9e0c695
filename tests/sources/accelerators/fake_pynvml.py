"""Devices for the real ``pynvml`` to report, on machines without a GPU.

Why a stand-in at all: NVML answers only where an NVIDIA driver and device
are; CI has neither, and pynvml reaches the driver through ctypes calls into
``libnvidia-ml.so``, with no recording to replay at that level (short of a
fake ``libnvidia-ml.so``, which would be a stand-in too, in C). What is real
here: the error classes, codes, messages and constants are the installed
``pynvml``'s own, so the poller handles the very exceptions the library
raises; every call scripted here has the real ``pynvml`` call's name and
parameters (test_nvml.py checks); the library without a driver is tested for
real in test_nvml.py; and the device's answers are what a real H100 answered
through NVML (``recorded_h100``, from ``tests/fixtures/smi/h100_2026-11-22``).
Tests change one answer at a time from there (an unsupported reading, a
Windows process) to reach the paths that H100 did not take.
"""

from __future__ import annotations

from types import SimpleNamespace

from pynvml import (  # noqa: F401
    NVML_ERROR_DRIVER_NOT_LOADED,
    NVML_ERROR_LIBRARY_NOT_FOUND,
    NVML_ERROR_NOT_SUPPORTED,
    NVML_TEMPERATURE_GPU,
    NVMLError,
    nvmlMemory_v2,
)

from tests.support import READINGS

MIB = 2**20


def recorded_h100(phase: str = "load", **changes: object) -> dict:
    """The real H100's NVML answers in ``phase`` ("idle" or "load"), as a device for
    ``Library``: the v2 memory figures (used, total, reserved) NVML returned, and the
    readings the real poller took there, turned back into NVML's units (bytes, mW)."""
    (sample,), (raw,) = READINGS[phase]["nvml"], READINGS[phase]["nvml_raw_memory"]
    device = dict(uuid=sample["uuid"], name=sample["name"], bus_id=sample["bus_id"],
                  memory=tuple(round(raw[key] * MIB) for key in ("v2_used_mib", "v2_total_mib",
                                                                 "v2_reserved_mib")),
                  util=int(sample["util_pct"]), temp=int(sample["temp_c"]),
                  power_mw=round(sample["power_w"] * 1000),
                  processes=[(p["pid"], p["name"], round(p["mem_used_mib"] * MIB))
                             for p in sample["processes"]])
    return device | changes


class Library:
    """One configured fake: ``devices`` as dicts, ``init_error`` raised by nvmlInit."""

    def __init__(self, devices: list[dict], init_error: int | None = None) -> None:
        self.devices = devices
        self.init_error = init_error
        self.initialised = 0
        self.NVMLError = NVMLError
        self.NVML_ERROR_LIBRARY_NOT_FOUND = NVML_ERROR_LIBRARY_NOT_FOUND
        self.NVML_TEMPERATURE_GPU = NVML_TEMPERATURE_GPU
        self.nvmlMemory_v2 = nvmlMemory_v2

    def _read(self, handle: int, key: str):
        if f"{key}_error" in self.devices[handle]:
            raise NVMLError(self.devices[handle][f"{key}_error"])
        return self.devices[handle][key]

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise NVMLError(self.init_error)
        self.initialised += 1

    def nvmlShutdown(self) -> None:
        self.initialised -= 1

    def nvmlDeviceGetCount(self) -> int:
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        return self._read(handle, "uuid")

    def nvmlDeviceGetName(self, handle: int) -> bytes:
        return self._read(handle, "name").encode()  # old pynvml releases return bytes

    def nvmlDeviceGetMemoryInfo(self, handle: int, version: int | None = None):
        used, total, reserved = self._read(handle, "memory")
        if version is None:  # v1 counts the driver's reserve as used
            return SimpleNamespace(used=used + reserved, total=total, free=total - used - reserved)
        return SimpleNamespace(used=used, total=total, reserved=reserved, free=total - used - reserved)

    def nvmlDeviceGetUtilizationRates(self, handle: int):
        return SimpleNamespace(gpu=self._read(handle, "util"), memory=0)

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
        return self._read(handle, "power_mw")

    def nvmlDeviceGetPciInfo(self, handle: int):
        return SimpleNamespace(busId=self._read(handle, "bus_id"))

    def nvmlDeviceGetTemperatureV(self, handle: int, sensor: int) -> int:
        return self._read(handle, "temp")

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
        return self._read(handle, "temp")

    def nvmlDeviceGetComputeRunningProcesses(self, handle: int):
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, _, used in self._read(handle, "processes")]

    def nvmlSystemGetProcessName(self, pid: int) -> bytes:
        names = {pid: name for device in self.devices for pid, name, _ in device.get("processes", [])}
        return names[pid].encode()
