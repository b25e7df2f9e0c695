"""Capture what a real NVIDIA GPU prints, idle and under load, through both of rlwatch's paths.

A script, not a test: run it on a machine with an NVIDIA GPU (and torch, for
the load), then copy its output folder to ``tests/fixtures/smi/<gpu>_<date>/``;
``tests/parsers/smi/test_real_gpu.py`` then checks that nvidia-smi's output
parses and that NVML and nvidia-smi agreed on that machine.

    python3 tests/hardware/capture_gpu.py OUT_DIR

Writes (six files):
  query_gpu_idle.csv / query_gpu_load.csv   nvidia-smi --query-gpu=<GPU_FIELDS> noheader,nounits
  query_compute_apps_load.csv               nvidia-smi --query-compute-apps=<APP_FIELDS>, under load
  query_gpu_loop_load.csv                   the first rows of the -l 1 stream, under load
  readings.json                             NVML and nvidia-smi read back to back, idle and load,
                                            plus both snapshots (check --json objects)
  capture.log                               commands, exit statuses, versions, timings
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import subprocess
import sys
import time
from contextlib import aclosing
from dataclasses import asdict
from pathlib import Path

from tui.parsers.smi.nvidia_query_csv import (
    APP_FIELDS,
    GPU_FIELDS,
    gpu_sample,
    parse_gpus,
)
from tui.sources.accelerators.nvidia_smi import NvidiaSmiPoller, stream_argv
from tui.sources.accelerators.nvml import NvmlPoller
from tui.sources.accelerators.runner import LocalRunner
from tui.sources.accelerators.snapshot import take_snapshot

QUERY = ["nvidia-smi", "--query-gpu=" + ",".join(GPU_FIELDS), "--format=csv,noheader,nounits"]
APPS = ["nvidia-smi", "--query-compute-apps=" + ",".join(APP_FIELDS), "--format=csv,noheader,nounits"]
# bf16 matmuls on a resident 16 GiB buffer, until killed.
LOAD = """
import torch, time
hold = torch.empty(16 * 1024**3, dtype=torch.uint8, device="cuda")
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
print("load ready", flush=True)
while True:
    for _ in range(50):
        a = (a @ b).clamp_(-1, 1)
    torch.cuda.synchronize()
"""


class Capture:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.log_lines: list[str] = []

    def log(self, text: str) -> None:
        line = f"{time.strftime('%H:%M:%S')} {text}"
        self.log_lines.append(line)
        print(line, flush=True)

    def run(self, argv: list[str], name: str | None = None) -> str:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        self.log(f"$ {' '.join(argv)}  -> rc={done.returncode}")
        if name:
            (self.out / name).write_text(done.stdout)
        return done.stdout

    def raw_memory(self) -> list[dict[str, float]]:
        """NVML's v1 and v2 memory figures, to record what the driver's reserve is."""
        import pynvml
        pynvml.nvmlInit()
        rows = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            v1 = pynvml.nvmlDeviceGetMemoryInfo(handle)
            v2 = pynvml.nvmlDeviceGetMemoryInfo(handle, version=pynvml.nvmlMemory_v2)
            rows.append({"index": index, "v1_used_mib": v1.used / 2**20, "v1_total_mib": v1.total / 2**20,
                         "v2_used_mib": v2.used / 2**20, "v2_total_mib": v2.total / 2**20,
                         "v2_reserved_mib": v2.reserved / 2**20})
        pynvml.nvmlShutdown()
        return rows

    async def pair(self, nvml: NvmlPoller, csv_name: str) -> dict[str, object]:
        """NVML then nvidia-smi, back to back (the one closest in time to the other)."""
        started = time.time()
        nvml_samples = await nvml.read_once()
        text = self.run(QUERY, csv_name)
        smi_samples = parse_gpus(text)
        return {"at": started, "seconds_apart": round(time.time() - started, 3),
                "nvml": [asdict(sample) for sample in nvml_samples],
                "nvidia_smi": [asdict(sample) for sample in smi_samples],
                "nvml_raw_memory": self.raw_memory()}

    async def stream(self, lines: int) -> list[str]:
        """The first ``lines`` rows of the -l 1 stream, as printed, with arrival times."""
        rows: list[str] = []
        stream = LocalRunner().stream_lines(stream_argv(1))
        async for line in stream:
            rows.append(line.decode())
            self.log(f"stream row {len(rows)}: {line.decode()}  parsed={gpu_sample(line.decode()) is not None}")
            if len(rows) == lines:
                break
        await stream.aclose()
        return rows

    async def main(self) -> int:
        import pynvml
        try:
            version = importlib.metadata.version("nvidia-ml-py")
        except importlib.metadata.PackageNotFoundError:
            version = "?"
        self.log(f"python {sys.version.split()[0]}, nvidia-ml-py {version} from {pynvml.__file__}")
        self.run(["nvidia-smi", "-L"])
        self.log(self.run(["nvidia-smi", "--version"]).strip().replace("\n", " | "))
        nvml = NvmlPoller()
        readings: dict[str, object] = {"gpu_fields": list(GPU_FIELDS), "app_fields": list(APP_FIELDS)}
        readings["idle"] = await self.pair(nvml, "query_gpu_idle.csv")
        load = subprocess.Popen([sys.executable, "-c", LOAD], stdout=subprocess.PIPE, text=True)
        try:
            assert load.stdout is not None
            self.log(f"load process {load.pid}: {load.stdout.readline().strip()}")
            time.sleep(5)  # let utilisation and power settle
            readings["load"] = await self.pair(nvml, "query_gpu_load.csv")
            self.run(APPS, "query_compute_apps_load.csv")
            rows = await self.stream(4)
            (self.out / "query_gpu_loop_load.csv").write_text("\n".join(rows) + "\n")
            followed = []
            async with aclosing(NvidiaSmiPoller(LocalRunner(), interval=1).follow()) as batches:
                async for batch in batches:
                    followed.extend(batch)
                    if len(followed) >= 2:
                        break
            self.log(f"NvidiaSmiPoller.follow gave {len(followed)} rows, processes of the first: "
                     f"{[(p.pid, p.name, p.mem_used_mib) for p in followed[0].processes]}")
            readings["snapshot_local_nvml"] = [s.to_json() | {"tool": snap.tool} for snap in
                                               [await take_snapshot(LocalRunner(), "h100", local=True)]
                                               for s in snap.samples]
            readings["snapshot_nvidia_smi"] = [s.to_json() | {"tool": snap.tool} for snap in
                                               [await take_snapshot(LocalRunner(), "h100", local=False)]
                                               for s in snap.samples]
        finally:
            load.kill()
            load.wait()
        await nvml.close()
        (self.out / "readings.json").write_text(json.dumps(readings, indent=1) + "\n")
        for phase in ("idle", "load"):
            pair = readings[phase]
            for a, b in zip(pair["nvml"], pair["nvidia_smi"]):
                self.log(f"{phase} GPU{a['index']} {a['name']}: NVML util={a['util_pct']} mem={a['mem_used_mib']:.0f}/"
                         f"{a['mem_total_mib']:.0f} temp={a['temp_c']} power={a['power_w']} | nvidia-smi "
                         f"util={b['util_pct']} mem={b['mem_used_mib']}/{b['mem_total_mib']} temp={b['temp_c']} "
                         f"power={b['power_w']} | same uuid={a['uuid'] == b['uuid']}")
        (self.out / "capture.log").write_text("\n".join(self.log_lines) + "\n")
        return 0


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "gpu_capture")
    target.mkdir(parents=True, exist_ok=True)
    sys.exit(asyncio.run(Capture(target).main()))
