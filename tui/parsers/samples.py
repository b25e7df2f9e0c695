"""Reward managers' printed samples: ``[prompt]``, ``[response]``, ``[ground_truth]``, ``[score]``.

verl's naive/dapo/batch reward managers print one validation sample per data
source with ``print("[prompt]", text)``; the texts span many lines, and dict
scores print one ``[key] value`` line per key. The blocks carry no step
number: they belong to the step line that follows them.
"""

from __future__ import annotations

import re

from tui.parsers.records import Sample
from tui.parsers.text import clean_segments
from tui.parsers.values import parse_value
from tui.parsers.verl_steps import find_step

_TAG = re.compile(r"^\[(?P<tag>[A-Za-z_][\w/-]{0,40})\] ?(?P<rest>.*)$")
_TEXT_FIELDS = ("prompt", "response", "ground_truth")


def parse_samples(text: str, base_offset: int = 0) -> list[Sample]:
    """Parse every sample block in ``text`` (a slice of the log).

    A block opens at ``[prompt]``. ``prompt``/``response``/``ground_truth``
    may run over several lines; once the ``[score]`` (or any other tag after
    the ground truth) appears, each tag is one line and the first untagged
    line, step line or new ``[prompt]`` closes the block.
    """
    samples: list[Sample] = []
    fields: dict[str, list[str]] | None = None
    current = ""
    start = 0
    offset = base_offset

    def close() -> None:
        if fields is not None:
            samples.append(_build(fields, start))

    for raw_line in text.splitlines(keepends=True):
        line_offset = offset
        offset += len(raw_line.encode("utf-8"))
        segments = clean_segments(raw_line)
        line = segments[-1] if segments else ""
        if find_step(line) is not None:
            close()
            fields = None
            continue
        tag = _TAG.match(line)
        if tag and tag.group("tag") == "prompt":
            close()
            fields, current, start = {"prompt": [tag.group("rest")]}, "prompt", line_offset
            continue
        if fields is None:
            continue
        if tag:
            current = tag.group("tag")
            fields.setdefault(current, []).append(tag.group("rest"))
        elif current in _TEXT_FIELDS and current != "ground_truth":
            fields[current].append(line)
        else:
            close()
            fields = None
    close()
    return samples


def _build(fields: dict[str, list[str]], offset: int) -> Sample:
    joined = {key: "\n".join(lines).strip() for key, lines in fields.items()}
    score_text = joined.pop("score", None)
    return Sample(
        prompt=joined.pop("prompt", ""),
        response=joined.pop("response", ""),
        ground_truth=joined.pop("ground_truth", ""),
        score=parse_value(score_text) if score_text is not None else None,
        extra=joined,
        offset=offset,
    )
