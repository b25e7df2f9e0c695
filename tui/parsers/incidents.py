"""Lines that mean a run is failing: crashes, OOM, NCCL hangs, dead actors.

Matched on plain substrings so the scanner can find them at memchr speed; the
first kind that matches a line wins, most specific first.
"""

from __future__ import annotations

from tui.parsers.records import IncidentRecord

# (kind, substrings) — order matters: an OOM traceback line is an OOM.
INCIDENT_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # "CUDA out of memory", and the NPU/HIP spellings of the same failure.
    ("cuda-oom", ("out of memory",)),
    ("nccl-timeout", ("Watchdog caught collective operation timeout",)),
    # ``ActorDiedError: The actor died unexpectedly…`` and the raylet's
    # ``A worker died or was killed…``.
    ("actor-died", ("died unexpectedly", "died or was killed")),
    ("hydra-error", ("Error executing job with overrides",)),
    ("traceback", ("Traceback (most recent call last)",)),
)
# The text kept per incident; the full context is fetched by offset on demand.
_MAX_TEXT = 400


def match_incident(segment: str, offset: int) -> IncidentRecord | None:
    """Return an incident if ``segment`` contains one of the crash markers."""
    for kind, needles in INCIDENT_PATTERNS:
        for needle in needles:
            if needle in segment:
                return IncidentRecord(kind=kind, text=segment.strip()[:_MAX_TEXT], offset=offset)
    return None
