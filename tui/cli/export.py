"""``rlwatch export TARGET --tensorboard DIR``: a run's metrics as TensorBoard event files.

Gives TensorBoard curves to runs that only logged to the console: the tags
are verl's keys and the steps verl's steps, as if verl's ``tensorboard``
logger had been on, so ``tensorboard --logdir DIR`` shows the run. What is
written is the merged model (console text, and the JSONL and events the log
points at, where exact).

The events are what verl's own logger writes: torch's
``SummaryWriter.add_scalar(key, value, step)``, one event per value holding a
float32 ``simple_value`` and no plugin metadata. Every reader of verl's event
files reads that: TensorBoard, its ``EventAccumulator.Scalars()``, tbparse,
anything built on them. Values are therefore float32, as TensorBoard stores
every scalar. An earlier version wrote float64 tensor summaries to keep the
exact numbers; ``EventAccumulator`` lists those under ``Tensors()``, not
``Scalars()``, so scripts written for verl's files saw nothing. Writing both
would show each point twice in TensorBoard (it reads ``simple_value`` as a
scalar tensor of the same tag), so float32 alone is written: the exact values
stay where they came from (the JSONL, ``rlwatch check --json``).
"""

from __future__ import annotations

import asyncio
import math
import struct
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from tui.cli import exit_codes
from tui.cli.check import load
from tui.model.series import Series
from tui.parsers.text import safe_text
from tui.sources.base import SourceError
from tui.sources.tensorboard_events import event_files



def write_events(series: Mapping[str, Series], directory: Path) -> Path:
    """Write every value as torch's ``add_scalar`` does; return the file.

    Steps ascend, and within a step the keys come in the order the run first
    logged them, as verl's ``Tracking.log`` loop writes a step's dict. A value
    beyond float32's range becomes ±inf, as it would in torch. A tag is the key
    as every output shows it (``safe_text``): a control character in a log's key
    is written in its visible form, never raw.
    """
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(directory))
    written_at = time.time()  # the log does not say when each step ran
    cursors = dict.fromkeys(series, 0)
    tags = {key: safe_text(key) for key in series}  # ``tensorboard --inspect`` prints tags
    for step in sorted(set().union(*(s.steps for s in series.values()))):
        for key, values in series.items():
            at = cursors[key]
            if at < len(values) and values.steps[at] == step:
                cursors[key] = at + 1
                event = Event(step=step, wall_time=written_at)
                event.summary.value.add(tag=tags[key], simple_value=_float32(values.values[at]))
                writer.add_event(event)
    writer.close()
    return event_files(directory)[-1]


def _float32(value: float) -> float:
    """``value`` rounded to the float32 a ``simple_value`` holds, as torch rounds it: a
    finite double beyond float32's range becomes ±inf (``struct`` would refuse it)."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def run_export(target: str, log: str | None, tensorboard: str,
               accept_new_host_key: bool = False) -> int:
    """Entry point for ``rlwatch export``."""
    directory = Path(tensorboard).expanduser()
    if event_files(directory):
        print(f"rlwatch: {directory} already holds event files, and TensorBoard would show both "
              "runs as one; export into a new directory", file=sys.stderr)
        return exit_codes.CANNOT_WRITE
    try:
        model = asyncio.run(load(target, log, accept_new_host_key))
    except SourceError as error:
        print(f"rlwatch: {error}", file=sys.stderr)
        return exit_codes.UNREADABLE
    if not model.series:
        print(f"rlwatch: {model.log}: no metrics to export (not a training log?)", file=sys.stderr)
        return exit_codes.UNREADABLE
    try:
        written = write_events(model.series, directory)
    except OSError as error:
        print(f"rlwatch: {directory}: cannot write ({error.strerror or error})", file=sys.stderr)
        return exit_codes.CANNOT_WRITE
    values = sum(len(s) for s in model.series.values())
    print(safe_text(f"{written}: {values} values of {len(model.series)} metrics (float32, as "
                    "TensorBoard keeps scalars); "
                    f"view with: tensorboard --logdir {directory} --samples_per_plugin scalars=0"))
    return exit_codes.OK
