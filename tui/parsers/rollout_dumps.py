"""verl's per-step sample dumps: ``{rollout_data_dir,validation_data_dir}/{step}.jsonl``.

One JSON object per line with ``input``, ``output``, ``gts`` (v0.6+),
``score``, ``step`` and the reward function's extra fields (VERL_FORMATS.md
§6). Python's json module writes a NaN score as a bare ``NaN``, which
``json.loads`` reads back; a line cut by a still-running write is skipped.
"""

from __future__ import annotations

import json
import math
import re

from tui.parsers.records import Sample

_BASE = {"input", "output", "gts", "score", "step"}
DUMP_NAME = re.compile(r"^(\d+)\.jsonl$")


def parse_dump(data: bytes) -> list[Sample]:
    """The samples in one dump file; unreadable lines are skipped."""
    samples = []
    offset = 0
    for line in data.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        try:
            row = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(row, dict):
            continue
        samples.append(Sample(
            prompt=str(row.get("input", "")),
            response=str(row.get("output", "")),
            ground_truth=_text(row.get("gts", "")),
            score=_score(row.get("score")),
            extra={key: _text(value) for key, value in row.items() if key not in _BASE},
            offset=start,
        ))
    return samples


def _score(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if not math.isnan(value) else math.nan


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
