"""wandb's console ``Run summary:`` block: the run's last values, when the log has no others.

Grammar (GRAMMAR.md, "wandb-summary"), from real logs (corpus 035, EasyR1 issues)
and wandb's ``sdk/wandb_run.py`` footer::

    wandb: Run history:
    wandb:       actor/entropy ▁▂▃▅█
    wandb:
    wandb: Run summary:
    wandb:       actor/entropy 0.0643
    wandb: training/global_step 106
    wandb:
    wandb: 🚀 View run … at: https://…

Every row starts ``wandb:`` (after a Ray prefix, and ``wandb`` may be coloured:
the needle is the bare word); a summary row is ``wandb: <key> <number>`` with
the key right-aligned, values rounded by wandb. A history row has sparklines,
not a number, so a ``key number`` row is a summary row even when the
``Run summary:`` line itself was cut off. The block ends at the first ``wandb:``
row that is not one (the blank ``wandb:``, ``View run``).

The summary duplicates the last step of a log that printed its metrics, so it is
reported only when no other grammar reported any step: then its values are the
run's last values, at the step the summary names (``_step``,
``training/global_step``, ``train/global_step``, ``trainer/global_step``,
``global_step``) or else the last step known from a progress bar, else 1.
Keys starting with ``_`` (wandb's own ``_runtime``, ``_timestamp``) are left out.
The summary is printed by ``wandb.finish()``, i.e. at the end of the run.

So is the footer without it (``wandb: 🚀 View run … at: …``, ``wandb: Find logs
at: …``, older wandb's ``wandb: Synced N W&B file(s), …``): a run that logs no
summary (no ``wandb.log`` scalars, or ``WANDB_CONSOLE`` quieter) still says it
ended. Like the summary it is printed on any exit the process lived through, a
crash too (the crash then names the run), never on a kill; it is the run's end
only while no step follows it (the model's call).
"""

from __future__ import annotations

import re

from tui.parsers.kin.values import kin_value
from tui.parsers.records import Record, RunEndRecord, StepRecord

NEEDLES: tuple[bytes, ...] = (b"wandb",)

_ROW = re.compile(r"^wandb:\s+(?P<key>\S+) (?P<value>\S+)\s*$")
_FOOTER = re.compile(r"^wandb: (?:\S+ )?(?:View run \S.* at: |Find logs at: |Synced \d+ W&B file)")
_STEP_KEYS = ("_step", "training/global_step", "train/global_step", "trainer/global_step",
              "global_step")


class WandbSummaryLines:
    """Collects a summary block; hands it out when it ends."""

    def __init__(self) -> None:
        self._values: dict[str, float] = {}
        self._start: int | None = None
        self._end = 0
        self._header: int | None = None

    def parse(self, segment: str, offset: int, end: int, last_step: int | None,
              any_steps: bool) -> list[Record] | None:
        text = segment.strip()
        if not text.startswith("wandb:"):
            return None if not self._values else self._close(last_step, any_steps)
        if text.startswith("wandb: Run summary:"):
            self._header = offset
            return []
        if _FOOTER.match(text):
            return [*self._close(last_step, any_steps), RunEndRecord(offset, by_logger=True)]
        row = _ROW.match(text)
        value = kin_value(row.group("value")) if row is not None else None
        if row is None or value is None:
            return self._close(last_step, any_steps)
        if self._start is None:
            self._start = offset
        self._values[row.group("key")] = value
        self._end = end
        return []

    def finish(self, last_step: int | None, any_steps: bool) -> list[Record]:
        return self._close(last_step, any_steps)

    def _close(self, last_step: int | None, any_steps: bool) -> list[Record]:
        values, start, header = self._values, self._start, self._header
        self._values, self._start, self._header = {}, None, None
        if not values or start is None:
            return []
        records: list[Record] = [RunEndRecord(header if header is not None else start, by_logger=True)]
        if any_steps:
            return records
        step = next((int(values[k]) for k in _STEP_KEYS if k in values), None)
        if step is None:
            step = last_step if last_step is not None else 1
        metrics = {k: v for k, v in values.items() if not k.startswith("_")}
        records.append(StepRecord(step, metrics, header if header is not None else start, self._end))
        return records
