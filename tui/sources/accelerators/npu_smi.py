"""Huawei Ascend NPUs through ``npu-smi info``, polled (npu-smi has no loop mode).

On 310/310P cards the table prints power as ``NA``; the board's power is only
in ``npu-smi info -t common -i N`` (its ``mcu`` block), so for those cards it
is fetched at the slower ``detail_interval`` and shown on the card's chip 0
(it is the whole card's power, not one chip's).
"""

from __future__ import annotations

import time
from dataclasses import replace

from tui.parsers.smi.npu_smi_fields import board_power_w, parse_fields
from tui.parsers.smi.npu_smi_info import parse_info
from tui.parsers.smi.records import AcceleratorSample, SmiFormatError
from tui.sources.accelerators.polled import CommandPoller
from tui.sources.accelerators.runner import CommandFailed, CommandRunner

TOOL = "npu-smi"


class NpuSmiPoller(CommandPoller):
    """``npu-smi info`` every ``interval`` seconds, plus board power where the table lacks it."""

    def __init__(self, runner: CommandRunner, interval: float = 2.0, detail_interval: float = 30.0,
                 timeout: float = 30.0) -> None:
        super().__init__(runner, TOOL, [TOOL, "info"], parse_info, interval, timeout)
        self.detail_interval = detail_interval
        self._board_power: dict[int, float | None] = {}
        self._board_read_at = -detail_interval

    async def _read_board_power(self, npu_ids: list[int]) -> None:
        for npu_id in npu_ids:
            try:
                output = await self.runner.run([TOOL, "info", "-t", "common", "-i", str(npu_id)], self.timeout)
                self._board_power[npu_id] = board_power_w(parse_fields(output))
            except (CommandFailed, SmiFormatError):
                self._board_power[npu_id] = None

    async def read_once(self) -> list[AcceleratorSample]:
        samples = await super().read_once()
        unpowered = sorted({sample.npu_id for sample in samples
                            if sample.power_w is None and sample.chip_id == 0 and sample.npu_id is not None})
        if not unpowered:
            return samples
        now = time.monotonic()
        if now - self._board_read_at >= self.detail_interval:
            self._board_read_at = now
            await self._read_board_power(unpowered)
        return [replace(sample, power_w=self._board_power.get(sample.npu_id))
                if sample.power_w is None and sample.chip_id == 0 and sample.npu_id in self._board_power
                else sample for sample in samples]
