"""Big buffers in mappings of their own, so that growing them leaves no holes in the heap.

A run's series are typed arrays that grow by ``realloc`` a sixteenth at a time
while a backfill's lines and records come and go around them. glibc serves a
block that large from a mapping of its own (grown in place by ``mremap``,
handed back whole when freed) only above a threshold that it raises each time
such a block is freed, up to 32 MiB; after the first big buffer a backfill
frees, a million-step run's arrays (8 MB each) were placed in the heap among
the short-lived objects, each growth a move that left a hole behind: the
dashboard held 2.3 times the values it showed. Fixing the threshold at 256 KiB
keeps every array in its own mapping.
"""

from __future__ import annotations

import ctypes
import sys

# mallopt(3): M_MMAP_THRESHOLD, and the size from which a block is mapped on its own.
_M_MMAP_THRESHOLD = -3
MAPPED_FROM_BYTES = 256 * 1024


def map_large_buffers() -> bool:
    """Have this process's allocator map every block of ``MAPPED_FROM_BYTES`` or more on its
    own (glibc's Linux only; elsewhere nothing changes). True when it was set."""
    if sys.platform != "linux":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # this process's own C library
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MAPPED_FROM_BYTES))
