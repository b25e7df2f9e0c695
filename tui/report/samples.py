"""Fetching the validation samples a run printed, by byte range from its log."""

from __future__ import annotations

from tui.model.run_model import RunModel
from tui.parsers.records import Sample
from tui.parsers.samples import parse_samples
from tui.parsers.text import decode
from tui.report.verdict import SHOWN_SAMPLES
from tui.sources.base import LogSource

# A printed sample block is a prompt and a response: this much text holds one.
_SAMPLE_BYTES = 256 * 1024


async def printed_samples(model: RunModel, source: LogSource) -> list[Sample]:
    """The newest printed validation samples, read by byte range from the log."""
    samples = []
    for offset in model.sample_offsets[-SHOWN_SAMPLES:]:
        text = decode(await source.read_range(offset, offset + _SAMPLE_BYTES))
        found = parse_samples(text, offset)
        if found:
            samples.append(found[0])
    return samples
