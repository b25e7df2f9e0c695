"""``rlwatch export TARGET --tensorboard DIR``: a run's metrics as TensorBoard event files.

Gives TensorBoard curves to runs that only logged to the console: the tags
are verl's keys and the steps verl's steps, as if verl's ``tensorboard``
logger had been on, so ``tensorboard --logdir DIR`` shows the run. What is
written is the merged model (console text, and the JSONL and events the log
points at, where exact). Values go out as float64 tensors rather than
torch's float32 ``simple_value``, so TensorBoard reads back exactly the
numbers rlwatch parsed.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from tui.cli import exit_codes
from tui.cli.check import load
from tui.model.series import Series
from tui.sources.base import SourceError
from tui.sources.tensorboard_events import event_files

# export is not a monitoring plugin: 0 written, 1 the directory could not be
# written, 3 (as for check) the target could not be read.
CANNOT_WRITE = 1


def write_events(series: Mapping[str, Series], directory: Path) -> Path:
    """Write every value, one event per step holding all of that step's keys; return the file.

    The scalars plugin's metadata goes with a tag's first value only, as
    tf.summary writes it; TensorBoard keeps it per tag.
    """
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import DATA_CLASS_SCALAR, SummaryMetadata
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.types_pb2 import DT_DOUBLE
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    scalar = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"),
                             data_class=DATA_CLASS_SCALAR)
    writer = EventFileWriter(str(directory))
    written_at = time.time()  # the log does not say when each step ran
    described: set[str] = set()
    cursors = dict.fromkeys(series, 0)
    for step in sorted(set().union(*(s.steps for s in series.values()))):
        event = Event(step=step, wall_time=written_at)
        for key, values in series.items():
            at = cursors[key]
            if at < len(values) and values.steps[at] == step:
                cursors[key] = at + 1
                value = event.summary.value.add(
                    tag=key, tensor=TensorProto(dtype=DT_DOUBLE, double_val=[values.values[at]]))
                if key not in described:
                    value.metadata.CopyFrom(scalar)
                    described.add(key)
        writer.add_event(event)
    writer.close()
    return event_files(directory)[-1]


def run_export(target: str, log: str | None, tensorboard: str,
               accept_new_host_key: bool = False) -> int:
    """Entry point for ``rlwatch export``."""
    directory = Path(tensorboard).expanduser()
    if event_files(directory):
        print(f"rlwatch: {directory} already holds event files, and TensorBoard would show both "
              "runs as one; export into a new directory", file=sys.stderr)
        return CANNOT_WRITE
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
        return CANNOT_WRITE
    values = sum(len(s) for s in model.series.values())
    print(f"{written}: {values} values of {len(model.series)} metrics; "
          f"view with: tensorboard --logdir {directory} --samples_per_plugin scalars=0")
    return exit_codes.OK
