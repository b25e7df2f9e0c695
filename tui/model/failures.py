"""The failures of a run: incident markers grouped into the blocks they belong to.

One crash prints many marker lines — a header, frames, an OOM line at the
end of the same traceback, the same traceback once per rank. A user needs
one entry per block, named by what its block says once it has been read
(:class:`~tui.parsers.records.CrashBlock`), and the step it followed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tui.parsers.records import CrashBlock, IncidentRecord

# Markers this close after the previous one, with no step line between, are
# taken as one block while the block itself has not been read.
SAME_BLOCK_BYTES = 4096


@dataclass(frozen=True, slots=True)
class Failure:
    """One failure block: its first marker, what its block says once read, the step before it."""

    marker: IncidentRecord
    block: CrashBlock | None
    step: int | None
    markers: int = 1

    @property
    def offset(self) -> int:
        """Where the block starts (its first marker line)."""
        return self.marker.offset

    @property
    def kind(self) -> str:
        """The most specific kind the block shows (an OOM inside a traceback is an OOM)."""
        return self.block.kind if self.block is not None else self.marker.kind

    @property
    def text(self) -> str:
        """The exception line when the block has been read, else the marker line."""
        return self.block.exception if self.block is not None else self.marker.text

    @property
    def harmless(self) -> bool:
        """Python said it ignored this exception (``Exception ignored in: …``)."""
        return self.block is not None and self.block.harmless


def group_failures(incidents: list[IncidentRecord], blocks: dict[int, CrashBlock],
                   step_before: Callable[[int], int | None]) -> list[Failure]:
    """Group markers (in log order) into failures: a marker inside a read block's span,
    or close after the previous marker with no step between, joins that block."""
    failures: list[Failure] = []
    block_end = -1
    last_offset = -1
    for incident in sorted(incidents, key=lambda record: record.offset):
        step = step_before(incident.offset)
        if failures:
            current = failures[-1]
            joins = (incident.offset < block_end if current.block is not None else
                     incident.offset - last_offset <= SAME_BLOCK_BYTES and step == current.step)
            if joins:
                failures[-1] = Failure(current.marker, current.block, current.step,
                                       current.markers + 1)
                last_offset = incident.offset
                continue
        block = blocks.get(incident.offset)
        failures.append(Failure(incident, block, step))
        block_end = block.end if block is not None else -1
        last_offset = incident.offset
    return failures


def bursts(failures: tuple[Failure, ...] | list[Failure]) -> int:
    """How many bursts ``failures`` (in log order) come in: a failure starting within
    ``SAME_BLOCK_BYTES`` of the previous one's end, after the same step, is the same
    event told again (a segfault's glog line, its dump, Python's last words)."""
    count, previous_end, previous_step = 0, None, None
    for failure in failures:
        if (previous_end is None or failure.offset - previous_end > SAME_BLOCK_BYTES
                or failure.step != previous_step):
            count += 1
        block_end = failure.block.end if failure.block is not None else failure.offset + 1
        previous_end, previous_step = block_end, failure.step
    return count
