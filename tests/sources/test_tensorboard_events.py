"""TensorBoard event files from two writers, a resumed run, growth, cuts, junk and remote mirroring."""

import math
import shutil
import struct
from pathlib import Path

import pytest
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.summary import Writer
from tensorboard.summary.writer.event_file_writer import EventFileWriter
from tensorboard.summary.writer.record_writer import RecordWriter
from tensorboardX import SummaryWriter

from tests.support import packages_loaded_by
from tui.model.merge import Source
from tui.model.run_model import RunModel
from tui.parsers.verl_jsonl import JsonlScanner
from tui.sources.tensorboard_events import (
    EventFileReader,
    EventMirror,
    TensorBoardDir,
    event_files,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RESUMED = FIXTURES / "tensorboard" / "resumed"


def float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def read_all(directory: TensorBoardDir) -> list:
    records, more = [], True
    while more:
        batch, more = directory.poll()
        records += batch
    return records


def model_of(directory: Path) -> RunModel:
    model = RunModel()
    model.apply(read_all(TensorBoardDir(directory)), now=0.0, source=Source.TENSORBOARD)
    return model


def jsonl_steps() -> dict[int, dict[str, float]]:
    scanner = JsonlScanner()
    data = (FIXTURES / "jsonl" / "v0.6_json_dumps.jsonl").read_bytes()
    return {r.step: r.metrics for r in scanner.feed(data) + scanner.finish()}


def test_a_resumed_run_reads_both_files_and_the_re_done_step_wins():
    assert [p.name for p in event_files(RESUMED)] == sorted(p.name for p in RESUMED.iterdir()
                                                            if p.name.startswith("events"))
    model = model_of(RESUMED)
    exact = jsonl_steps()  # the same corpus values, unrounded
    assert model.series["actor/pg_loss"].value_at(4) == float32(exact[4]["actor/pg_loss"])
    assert list(model.series["actor/pg_loss"].steps) == [1, 2, 3, 4, 5, 6]
    for step in range(5):
        for key, value in exact[step].items():
            got = model.series[key].value_at(step)
            assert got == float32(value) or (math.isnan(got) and math.isnan(value)), (step, key)
    grad_norm = model.series["actor/grad_norm"]
    assert math.isnan(grad_norm.value_at(2)) and grad_norm.value_at(3) == math.inf
    assert "val/generations" not in model.series  # text, not a scalar
    assert "val-aux/aime_2025/reward/mean@30" in model.series  # torch keeps tags verbatim


def test_the_tensorboard_packages_own_writer(tmp_path):
    writer = Writer(str(tmp_path))
    for step in range(1, 4):
        writer.add_scalar("actor/pg_loss", step / 3, step)
        writer.add_scalar("critic/score/mean", -step, step)
    writer.close()
    model = model_of(tmp_path)
    assert list(model.series["actor/pg_loss"].values) == [float32(s / 3) for s in range(1, 4)]
    assert list(model.series["critic/score/mean"].values) == [-1.0, -2.0, -3.0]


def test_tensorboardx_summary_writer_with_text_and_histograms(tmp_path):
    writer = SummaryWriter(str(tmp_path))
    for step in range(3):
        writer.add_scalar("response_length/mean", 100.0 + step, step)
        writer.add_histogram("rollout/lengths", [1.0, 2.0, 3.0], step)
        writer.add_text("val/generations", "**Sample 1**", step)
    writer.close()
    model = model_of(tmp_path)
    assert set(model.series) == {"response_length/mean"}
    assert list(model.series["response_length/mean"].values) == [100.0, 101.0, 102.0]


def test_files_are_followed_as_they_grow_and_appear(tmp_path):
    writer = EventFileWriter(str(tmp_path))
    directory = TensorBoardDir(tmp_path)
    assert directory.poll() == ([], False)
    for step in (1, 2):
        writer.add_event(scalar_event("a", step, float(step)))
    writer.flush()
    assert [(r.step, r.metrics) for r in directory.poll()[0]] == [(1, {"a": 1.0}), (2, {"a": 2.0})]
    assert directory.poll() == ([], False)
    writer.add_event(scalar_event("a", 3, 3.0))
    writer.flush()
    second = EventFileWriter(str(tmp_path), filename_suffix=".resumed")
    second.add_event(scalar_event("b", 3, 30.0))
    second.flush()
    assert [(r.step, r.metrics) for r in directory.poll()[0]] == [(3, {"a": 3.0}), (3, {"b": 30.0})]
    writer.close()
    second.close()


def scalar_event(tag: str, step: int, value: float) -> Event:
    event = Event(step=step, wall_time=1.0)
    event.summary.value.add(tag=tag, simple_value=value)
    return event


@pytest.mark.parametrize("cut", [1, 5, 12, 20, 40])
def test_a_record_cut_at_the_end_waits_and_is_read_once_complete(tmp_path, cut):
    source = event_files(RESUMED)[0]
    data = source.read_bytes()
    copy = tmp_path / source.name
    copy.write_bytes(data[:-cut])
    reader = EventFileReader(copy)
    first = reader.read()
    with open(copy, "ab") as handle:
        handle.write(data[-cut:])
    rest = reader.read()
    whole = EventFileReader(source).read()
    assert reader.error is None
    merged = {}
    for record in first + rest:
        merged.setdefault(record.step, {}).update(record.metrics)
    expected = {}
    for record in whole:
        expected.setdefault(record.step, {}).update(record.metrics)
    assert repr(merged) == repr(expected)  # repr: NaN compares equal to itself there


def test_a_truncated_file_reads_up_to_the_cut(tmp_path):
    source = event_files(RESUMED)[0]
    (tmp_path / source.name).write_bytes(source.read_bytes()[:5000])
    model = model_of(tmp_path)
    assert model.series and max(s.steps[-1] for s in model.series.values()) <= 1


def test_junk_never_raises(tmp_path):
    (tmp_path / "events.out.tfevents.1.junk").write_bytes(bytes(range(256)) * 40)
    with open(tmp_path / "events.out.tfevents.2.undecodable", "wb") as handle:
        records = RecordWriter(handle)  # valid framing and checksums around a non-Event payload
        records.write(b"\xff\xff\xff\xff not a protobuf")
        records.write(scalar_event("a", 7, 1.5).SerializeToString())
    (tmp_path / "events.out.tfevents.3.empty").write_bytes(b"")
    directory = TensorBoardDir(tmp_path)
    assert [(r.step, r.metrics) for r in read_all(directory)] == [(7, {"a": 1.5})]
    assert directory.problems() == [
        f"{tmp_path}/events.out.tfevents.2.undecodable: 1 record(s) do not decode; skipped"]


def test_a_vanished_file_is_reported_not_raised(tmp_path):
    shutil.copy(event_files(RESUMED)[0], tmp_path)
    directory = TensorBoardDir(tmp_path)
    directory.poll(limit=3)
    gone = event_files(tmp_path)[0]
    gone.unlink()
    read_all(directory)  # what the loader had buffered, then the loss
    assert directory.problems() == [f"{gone}: no such file"]
    assert directory.poll() == ([], False)


def test_batches_bound_each_poll_and_lose_nothing():
    directory = TensorBoardDir(RESUMED)
    batches = []
    more = True
    while more:
        batch, more = directory.poll(limit=50)
        batches.append(batch)
    assert len(batches) > 10
    steps = {}
    for record in (r for batch in batches for r in batch):
        steps.setdefault(record.step, {}).update(record.metrics)
    whole = {}
    for record in read_all(TensorBoardDir(RESUMED)):
        whole.setdefault(record.step, {}).update(record.metrics)
    assert repr(steps) == repr(whole)


def test_a_remote_file_mirrored_in_odd_chunks_reads_like_the_original(tmp_path):
    mirror = EventMirror(tmp_path / "mirror")
    directory = TensorBoardDir(mirror.directory)
    records = []
    for source in event_files(RESUMED):
        data = source.read_bytes()
        for start in range(0, len(data), 777):  # cuts records anywhere, as a network does
            mirror.append(source.name, mirror.size(source.name), data[start:start + 777])
            records += read_all(directory)
    assert mirror.size(event_files(RESUMED)[1].name) == event_files(RESUMED)[1].stat().st_size
    merged, whole = {}, {}
    for record in records:
        merged.setdefault(record.step, {}).update(record.metrics)
    for record in read_all(TensorBoardDir(RESUMED)):
        whole.setdefault(record.step, {}).update(record.metrics)
    assert repr(merged) == repr(whole)


def test_the_mirror_refuses_gaps_overlaps_and_paths(tmp_path):
    mirror = EventMirror(tmp_path)
    mirror.append("events.out.tfevents.1.host", 0, b"abc")
    with pytest.raises(ValueError):
        mirror.append("events.out.tfevents.1.host", 5, b"def")
    with pytest.raises(ValueError):
        mirror.append("events.out.tfevents.1.host", 1, b"bc")
    for name in ("../events.out.tfevents.1.host", "sub/events.out.tfevents.1", "grpo.log", ".."):
        with pytest.raises(ValueError):
            mirror.append(name, 0, b"x")


def test_importing_the_reader_does_not_import_tensorboard():
    assert packages_loaded_by("import tui.sources.tensorboard_events", {"tensorboard"}) == []
