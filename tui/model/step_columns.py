"""Step records as columns: a backfill's thousand lines of the same ~50 keys, transposed.

A model takes a backfill's values key by key (one array extend per metric)
rather than value by value. The columns are typed arrays, which pickle as
bytes: a worker process that parses a run's lines (``tui.session.parse_pool``)
hands back its steps in this form for a fraction of what sending the records
themselves would cost the event loop that unpickles them.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import lt

from tui.parsers.records import StepRecord


@dataclass(frozen=True, slots=True)
class StepColumns:
    """Step records in the order given, as the model folds them in.

    ``steps``, ``offsets`` and ``ends`` are the records that carried metrics
    (the step index's entries); ``dropped`` counts the unreadable items of all of
    them; ``prefixed`` is the last such record's (None: there was none).
    ``columns`` maps each key to its steps and values when the steps strictly
    ascend; otherwise it is None and ``unordered`` holds the records, whose
    values the model then offers one by one (a resumed run re-printing steps).
    """

    steps: array[int]
    offsets: array[int]
    ends: array[int]
    dropped: int
    prefixed: bool | None
    columns: dict[str, tuple[array[int], array[float]]] | None
    unordered: tuple[StepRecord, ...] = ()
    # The pid in the last record's process prefix (None: none said one).
    pid: int | None = None


def step_columns(records: Sequence[StepRecord]) -> StepColumns:
    """Transpose ``records``: lines with the same keys (most of a log's) a group at a time."""
    dropped = sum(record.dropped for record in records)
    records = [record for record in records if record.metrics]
    steps = [record.step for record in records]
    index = (array("q", steps), array("q", [record.offset for record in records]),
             array("q", [record.end for record in records]))
    prefixed = records[-1].prefixed if records else None
    pid = records[-1].pid if records else None
    if not all(map(lt, steps, steps[1:])):
        return StepColumns(*index, dropped, prefixed, None, tuple(records), pid=pid)
    # Lists first, arrays once at the end: a log whose validation steps add keys every tenth
    # line groups ~5 records at a time, and an array's extend from a tuple costs more a value.
    lists: dict[str, tuple[list[int], list[float]]] = {}
    for keys, same_keys in groupby(records, lambda record: tuple(record.metrics)):
        group = list(same_keys)
        group_steps = [record.step for record in group]
        for key, group_values in zip(keys, zip(*(record.metrics.values() for record in group))):
            column = lists.get(key)
            if column is None:
                lists[key] = column = ([], [])
            column[0].extend(group_steps)
            column[1].extend(group_values)
    columns = {key: (array("q", at), array("d", values)) for key, (at, values) in lists.items()}
    return StepColumns(*index, dropped, prefixed, columns, pid=pid)
