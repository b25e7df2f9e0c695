"""Every metric of one step, grouped by prefix, against the step before and the run.

Each row reads: the key, its value at the step, the change from the
metric's previous point (the previous validation, for validation metrics),
the run's median, and where the value came from when it was not the console
log. Medians of a 100k-step run take a moment, so they are worked out in a
thread and filled in when ready, and kept until the series grows.
"""

from __future__ import annotations

import asyncio
import math
import statistics
from array import array
from bisect import bisect_left
from collections.abc import Iterable

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from tui.model.merge import Source, TaggedSeries
from tui.model.run_model import RunModel
from tui.parsers.text import safe_text
from tui.ui.format import format_delta, format_exact, format_number

# The groups in the order a user reads a step (issue 6); others follow alphabetically.
GROUP_ORDER = ("actor/", "critic/", "response_length/", "timing_s/", "perf/", "val-core/",
               "val-aux/", "val/")
UNGROUPED = "other"
_GROUP_ROW = "group:"
_PENDING = Text("…", style="dim")


def group_of(key: str) -> str:
    """The key's prefix up to its first ``/``, which names its group."""
    head, slash, _ = key.partition("/")
    return f"{head}/" if slash else UNGROUPED


def grouped(keys: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Keys by group: the known groups first in reading order, then the rest, keys sorted."""
    groups: dict[str, list[str]] = {}
    for key in sorted(keys):
        groups.setdefault(group_of(key), []).append(key)

    def rank(name: str) -> tuple[int, str]:
        known = name in GROUP_ORDER
        return (GROUP_ORDER.index(name) if known else len(GROUP_ORDER) + (name == UNGROUPED), name)

    return [(name, groups[name]) for name in sorted(groups, key=rank)]


def run_median(values: array) -> float | None:
    """Median of the finite values (None when there are none)."""
    finite = [value for value in values if math.isfinite(value)]
    return statistics.median(finite) if finite else None


class StepMetrics(DataTable):
    """A row per metric of the step, under a row per group.

    Cells are rich Text, which DataTable measures and never reads as markup; a key
    from the log goes through ``safe_text`` (an escape sequence in it is shown, inert).
    """

    DEFAULT_CSS = """
    StepMetrics { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        # key → (points, rewrites, median) of the series when it was worked out.
        self._medians: dict[str, tuple[int, int, float | None]] = {}
        self._median_column: ColumnKey | None = None  # known once mounted

    def on_mount(self) -> None:
        columns = self.add_columns("metric", "value", "Δ prev", "run median", "source")
        self._median_column = columns[3]

    @property
    def highlighted_key(self) -> str | None:
        """The metric under the cursor (None on a group row)."""
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return None if key is None or key.startswith(_GROUP_ROW) else key

    def show_step(self, model: RunModel, step: int) -> None:
        """Fill the table with ``step``'s metrics, keeping the cursor on the same metric."""
        keep = self.highlighted_key
        self.clear()
        present = {key: series for key, series in model.series.items()
                   if series.value_at(step) is not None}
        for group, keys in grouped(present):
            self.add_row(Text(f"{safe_text(group)}  ({len(keys)})", style="bold"), "", "", "", "",
                         key=_GROUP_ROW + group)
            for key in keys:
                self.add_row(*self._cells(key, present[key], step), key=key)
        # On the same metric as before, else on the first metric (row 0 is a group).
        self.move_cursor(row=self.get_row_index(keep) if keep in present else 1)
        self.run_worker(self._fill_medians(present), exclusive=True, group="medians")

    def _cells(self, key: str, series: TaggedSeries, step: int) -> list[Text]:
        at = bisect_left(series.steps, step)
        value = series.values[at]
        delta = (format_delta(value - series.values[at - 1])
                 if at > 0 and math.isfinite(series.values[at - 1]) else "")
        source = series.source_at(step)
        cached = self._cached_median(key, series)
        median = _PENDING if cached is False else Text(format_number(cached) if cached is not None
                                                       else "")
        return [Text(f"  {safe_text(key)}"), Text(format_exact(value)), Text(delta), median,
                Text(source.label if source not in (None, Source.CONSOLE) else "")]

    def _cached_median(self, key: str, series: TaggedSeries) -> float | None | bool:
        """The median if worked out for the series as it is now, else False."""
        cached = self._medians.get(key)
        if cached is None or cached[:2] != (len(series), series.rewrites):
            return False
        return cached[2]

    async def _fill_medians(self, present: dict[str, TaggedSeries]) -> None:
        stale = {key: (len(series), series.rewrites, series)
                 for key, series in present.items() if self._cached_median(key, series) is False}
        if not stale:
            return
        # The thread takes its own copy of each series (one C call, so a step
        # appended meanwhile on the event loop cannot tear it).
        medians = await asyncio.to_thread(
            lambda: {key: run_median(series.values[:count])
                     for key, (count, _, series) in stale.items()})
        for key, median in medians.items():
            count, rewrites, _ = stale[key]
            self._medians[key] = (count, rewrites, median)
            if key in self.rows and self._median_column is not None:
                self.update_cell(key, self._median_column,
                                 Text(format_number(median) if median is not None else ""))
