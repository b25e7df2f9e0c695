"""TensorBoard event files: a run's scalars, read and followed as they grow.

verl's ``tensorboard`` logger calls torch's ``add_scalar(key, value, step)``
for every metric, so the tags are verl's keys and the steps verl's steps
(VERL_FORMATS.md §3). A run directory holds one ``events.out.tfevents.*``
file per writer: a resumed run adds one, and validation samples go to a
second writer's file as text, which is skipped here.

Files are read with tensorboard's own ``RawEventFileLoader``: it keeps its
place between calls, so each poll reads only new records, and it leaves a
record the writer has half written for the next poll instead of failing.
The records are decoded here rather than through ``EventFileLoader``'s compat
layers, which cost three times the read and add nothing a scalar needs.
``tensorboard`` is imported on the first read, never at start-up.

The loader reads paths, not bytes. A remote run is read by mirroring each of
its event files into a local directory (``EventMirror``: append the bytes
past what is mirrored) and following the mirror like any local directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from tui.regular_file import is_regular
from tui.parsers.records import StepRecord

EVENT_FILE_MARK = "events.out.tfevents."
# Records turned into step records per read, so a big backfill is folded into
# the model a piece at a time instead of being held whole.
BATCH_EVENTS = 50_000


def is_event_file(name: str) -> bool:
    """True for a file name that TensorBoard would read as an event file."""
    return name.startswith(EVENT_FILE_MARK)


def _started(path: Path) -> tuple[int, str]:
    """Sort key: the writer's start time (the number after the mark), then the name."""
    stamp = path.name[len(EVENT_FILE_MARK):].split(".", 1)[0]
    return (int(stamp) if stamp.isdigit() else 0), path.name


def event_files(directory: Path) -> list[Path]:
    """The event files directly in ``directory``, in the order their writers started (regular
    files only: a FIFO named like one would hang its reader)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted((directory / name for name in names
                   if is_event_file(name) and is_regular(directory / name)), key=_started)


class EventFileReader:
    """One event file, read from where the last read stopped.

    Unreadable input never raises: a record cut at the end waits (the writer
    may finish it), a record that does not decode is counted in
    ``bad_records``, and a file that vanished or cannot be opened sets
    ``error`` and reads as empty.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.events_read = 0
        self.bad_records = 0
        self.error: str | None = None
        self._loader = None
        # Whether each tensor-valued tag is a scalar: summaries of the
        # tensorboard and tf.summary writers say so on a tag's first event only.
        self._scalar_tags: dict[str, bool] = {}

    def read(self, limit: int = BATCH_EVENTS) -> list[StepRecord]:
        """Step records from up to ``limit`` new records; consecutive events of one step form one."""
        from google.protobuf.message import DecodeError
        from tensorboard.compat import tf
        from tensorboard.compat.proto.event_pb2 import Event

        records: list[StepRecord] = []
        step: int | None = None
        metrics: dict[str, float] = {}
        self.error = None
        try:
            for count, raw in enumerate(self._records(), start=1):
                self.events_read += 1
                try:
                    event = Event.FromString(raw)
                except DecodeError:
                    self.bad_records += 1
                    continue
                scalars = self._scalars(event)
                if scalars:
                    if event.step != step and step is not None and metrics:
                        records.append(StepRecord(step, metrics, 0, 0))
                        metrics = {}
                    step = event.step
                    metrics.update(scalars)
                if count >= limit:
                    break
        except (OSError, tf.errors.OpError) as error:
            gone = isinstance(error, (FileNotFoundError, tf.errors.NotFoundError))
            self.error = f"{self.path}: {'no such file' if gone else 'cannot be read'}"
        if step is not None and metrics:
            records.append(StepRecord(step, metrics, 0, 0))
        return records

    def _records(self):
        """tensorboard's loader over the file, created on first use."""
        if self._loader is None:
            from tensorboard.backend.event_processing.event_file_loader import (
                RawEventFileLoader,
            )

            self._loader = RawEventFileLoader(str(self.path))
        return self._loader.Load()

    def _scalars(self, event) -> dict[str, float]:
        """The scalar values of one event: torch/tensorboardX ``simple_value``s and
        rank-0 numeric tensors of tags declared scalar."""
        out: dict[str, float] = {}
        if event.WhichOneof("what") != "summary":
            return out
        for value in event.summary.value:
            kind = value.WhichOneof("value")
            if kind == "simple_value":
                out[value.tag] = value.simple_value
            elif kind == "tensor" and self._is_scalar_tag(value):
                number = _tensor_number(value.tensor)
                if number is not None:
                    out[value.tag] = number
        return out

    def _is_scalar_tag(self, value) -> bool:
        known = self._scalar_tags.get(value.tag)
        if known is None:
            from tensorboard.compat.proto.summary_pb2 import DATA_CLASS_SCALAR

            metadata = value.metadata
            known = (metadata.data_class == DATA_CLASS_SCALAR
                     or metadata.plugin_data.plugin_name == "scalars")
            self._scalar_tags[value.tag] = known
        return known


def _tensor_number(tensor) -> float | None:
    """The one number a scalar tensor holds, of whichever numeric dtype it was written in."""
    from tensorboard.util.tensor_util import make_ndarray

    try:
        array = make_ndarray(tensor)
    except (ValueError, TypeError):
        return None
    if array.size != 1 or array.dtype.kind not in "fiub":
        return None
    return float(array.reshape(-1)[0])


class TensorBoardDir:
    """Every event file of one run's TensorBoard directory, followed as they grow and appear."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._readers: dict[Path, EventFileReader] = {}

    def poll(self, limit: int = BATCH_EVENTS) -> tuple[list[StepRecord], bool]:
        """Step records from up to ``limit`` new events, and whether more may be waiting.

        Files are read oldest first and a newer one only once the older ones
        are read to their end, so a step that a resumed run did again ends up
        with the resumed run's value (the later one wins).
        """
        for path in event_files(self.directory):
            if path not in self._readers:
                self._readers[path] = EventFileReader(path)
        records: list[StepRecord] = []
        for reader in self._readers.values():
            before = reader.events_read
            records.extend(reader.read(limit))
            limit -= reader.events_read - before
            if limit <= 0:
                return records, True
        return records, False

    def last_written(self) -> float | None:
        """The newest modification time of the directory's event files (None: none there)."""
        times = []
        for path in event_files(self.directory):
            try:
                times.append(path.stat().st_mtime)
            except OSError:
                continue
        return max(times, default=None)

    def problems(self) -> list[str]:
        """What could not be read, in words: vanished files, records that do not decode."""
        out = [reader.error for reader in self._readers.values() if reader.error]
        out += [f"{reader.path}: {reader.bad_records} record(s) do not decode; skipped"
                for reader in self._readers.values() if reader.bad_records]
        return out


class EventMirror:
    """Local copies of a remote run's event files, grown by the bytes a remote source brings.

    A remote source lists the run's event files and, for each, sends the
    bytes from ``size(name)`` on; ``TensorBoardDir(mirror.directory)`` then
    reads them as it reads local files, a cut record waiting for its rest.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def size(self, name: str) -> int:
        """Bytes of ``name`` mirrored so far: the offset to fetch from."""
        try:
            return (self.directory / self._checked(name)).stat().st_size
        except FileNotFoundError:
            return 0

    def append(self, name: str, offset: int, data: bytes) -> None:
        """Add the bytes of event file ``name`` that start at ``offset``.

        Only the next bytes are taken (``offset == size(name)``): a gap or an
        overlap would corrupt the copy, so it is refused with ValueError.
        """
        path = self.directory / self._checked(name)
        if offset != self.size(name):
            raise ValueError(f"{name}: bytes from {offset} do not follow the {self.size(name)} mirrored")
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as handle:
            handle.write(data)

    @staticmethod
    def _checked(name: str) -> str:
        """A remote listing names files, never paths: nothing may land outside the mirror."""
        if name != os.path.basename(name) or not is_event_file(name):
            raise ValueError(f"{name!r} is not an event file name")
        return name
