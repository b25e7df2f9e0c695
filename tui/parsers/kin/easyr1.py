"""EasyR1 (a verl fork): its console logger's ``Step N`` + YAML blocks, and its first
``step N: - key:value`` lines.

Grammar (GRAMMAR.md, "easyr1-yaml"), from hiyouga/EasyR1's
``verl/utils/logger/logger.py``: since March 2025 ``ConsoleLogger.log`` prints
``f"Step {step}\\n" + yaml.dump(unflatten_dict(metrics), indent=2)``::

    (Runner pid=2171) Step 3
    (Runner pid=2171) actor:
    (Runner pid=2171)   entropy_loss: 0.5306
    (Runner pid=2171)   pg_loss: -0.0028
    (Runner pid=2171) critic:
    (Runner pid=2171)   score:
    (Runner pid=2171)     mean: 0.4625

Keys are sorted (``yaml.dump``'s default), nested by ``/``, and the trainer runs
in the Ray actor ``Runner``, so every row carries ``(Runner pid=…)``: that
prefix is the needle, and the rows (parents included) all reach the parser even
when only needle lines travel. The rows after the header are read with a stack
of parent keys by indent and flattened back to verl's names
(``critic/score/mean``). Values are YAML scalars: ``0.5``, ``1.0e-06``, ``.nan``,
``.inf``. Each leaf row is a one-metric step record; the block ends at a row
that is not ``key:`` or ``key: value``. The ``Config`` dump at start-up (also
YAML) has no ``Step`` header and is not read. Before March 2025 the logger printed
``step N: - actor/pg_loss:0.123 - …`` (verl's items after ``step N: -``), read here
too. ``Total training steps: N`` and the ``Running step`` bar are read by the
scanner itself.
"""

from __future__ import annotations

import re

from tui.parsers.kin.values import kin_value
from tui.parsers.records import Record, StepRecord
from tui.parsers.verl_steps import parse_items

NEEDLES: tuple[bytes, ...] = (b"(Runner pid=",)

_HEADER = re.compile(r"^Step (\d+)\s*$")
_OLD_LINE = re.compile(r"^step (\d+): - ")
_ROW = re.compile(r"^(?P<indent> *)(?P<key>[^\s:][^\s:]*):(?: (?P<value>\S.*?))?\s*$")


class EasyR1Lines:
    """``Step N`` YAML blocks (state: the step and the parent keys of the current row)."""

    def __init__(self) -> None:
        self._step: int | None = None
        self._parents: list[tuple[int, str]] = []

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        text = segment.rstrip()
        header = _HEADER.match(text)
        if header is not None:
            self._step, self._parents = int(header.group(1)), []
            return []
        old = _OLD_LINE.match(text)
        if old is not None:
            self._step = None
            metrics, dropped = parse_items(text[old.end():])
            return [StepRecord(int(old.group(1)), metrics, offset, end, dropped)] if metrics else []
        if self._step is None:
            return None
        row = _ROW.match(text)
        if row is None:
            self._step = None  # the block is over
            return None
        indent, key, raw = len(row.group("indent")), row.group("key"), row.group("value")
        while self._parents and self._parents[-1][0] >= indent:
            self._parents.pop()
        if raw is None:
            self._parents.append((indent, key))
            return []
        value = kin_value(raw)
        if value is None:
            return []
        path = "/".join([name for _, name in self._parents] + [key])
        return [StepRecord(self._step, {path: value}, offset, end)]
