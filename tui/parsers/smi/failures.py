"""Turning a tool's failure output into one line a user can act on.

nvidia-smi prints its errors on stdout (``No devices were found``, the
"couldn't communicate with the NVIDIA driver" paragraph); npu-smi and the AMD
tools do similar. The dashboard shows the line once, quietly, and tries again
later, so the line must say what is wrong in words, not as a traceback.
"""

from __future__ import annotations

import re

from tui.parsers.smi.common import text_of

# (pattern in the output, what to tell the user); the first match wins.
_KNOWN: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"couldn't communicate with the NVIDIA driver", re.I),
     "cannot talk to the NVIDIA driver (not loaded, or replaced without a reboot)"),
    (re.compile(r"Driver/library version mismatch", re.I),
     "NVIDIA driver/library version mismatch (the driver was upgraded; reboot or reload it)"),
    (re.compile(r"No devices were found", re.I), "no NVIDIA devices found"),
    (re.compile(r"Field \"([^\"]+)\" is not a valid field to query", re.I),
     "this driver does not know the query field {0}"),
    (re.compile(r"There is no NPU card on this server", re.I), "no Ascend NPU found"),
    (re.compile(r"dcmi model initialized failed|Failed to init dcmi|dcmi_init.*fail", re.I),
     "cannot initialise the Ascend driver (DCMI); is the driver installed and the device visible?"),
    (re.compile(r"No AMD GPUs specified|No GPU devices found|No AMD GPU", re.I), "no AMD GPUs found"),
    (re.compile(r"Permission denied|Insufficient Permissions", re.I), "permission denied"),
]
_MAX = 160


def explain(tool: str, output: bytes | str, returncode: int | None = None) -> str:
    """One line saying why ``tool`` gave no readings, for the accelerator panel."""
    text = text_of(output)
    for pattern, message in _KNOWN:
        match = pattern.search(text)
        if match:
            return f"{tool}: {message.format(*match.groups())}"
    # The first line with words in it: a table's border says nothing.
    first = next((line.strip(" |\t") for line in text.splitlines() if any(c.isalnum() for c in line)), "")
    if first:
        first = first if len(first) <= _MAX else first[:_MAX - 1] + "…"
        return f"{tool}: {first}"
    if returncode:
        return f"{tool}: exited with status {returncode} and printed nothing"
    return f"{tool}: printed nothing"
