"""``rlwatch export``: real runs round-trip through TensorBoard event files, value for value.

The files are what verl's own logger writes (torch's ``add_scalar``: float32
``simple_value``s), so they are read back here by every reader of verl's
files: rlwatch's own, TensorBoard's data provider, ``EventAccumulator.Scalars()``
and tbparse. tensorboardX has no reader (it only writes); its writer is what
the reader tests of ``tui.sources.tensorboard_events`` use.
"""

import asyncio
import math
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from tensorboard import context
from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer

from tests.corpus import verl_log
from tests.support import accumulated, bits, read_back
from tui.cli.check import load
from tui.cli.export import run_export
from tui.model.run_model import RunModel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def float32(value: float) -> float:
    """``value`` as TensorBoard keeps a scalar (a finite value past float32's range: ±inf)."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def parsed(target: Path) -> RunModel:
    return asyncio.run(load(str(target), None))


def as_dicts(model: RunModel) -> dict[str, dict[int, bytes]]:
    """The model's values as the float32 TensorBoard keeps, as bits."""
    return {key: {step: bits(float32(value)) for step, value in zip(series.steps, series.values)}
            for key, series in model.series.items()}


# 3-decimal v0.2, v0.1 with ANSI, np.float64 full repr, NaN values, TRL's dict lines, wrapped lines
@pytest.mark.parametrize("prefix", ["032", "030", "047", "036", "013", "048"])
def test_every_parsed_value_reads_back_as_its_float32(prefix, tmp_path):
    out = tmp_path / "tb"
    assert run_export(str(verl_log(prefix)), None, str(out)) == 0
    back = read_back(out)
    assert {k: {s: bits(v) for s, v in steps.items()} for k, steps in back.items()} == as_dicts(
        parsed(verl_log(prefix)))


def test_tensorboard_itself_shows_every_key_as_a_scalar_with_every_point(tmp_path):
    out = tmp_path / "tb"
    run_export(str(verl_log("032")), None, str(out))
    multiplexer = plugin_event_multiplexer.EventMultiplexer(tensor_size_guidance={"scalars": 0})
    multiplexer.AddRunsFromDirectory(str(out))
    multiplexer.Reload()
    provider = data_provider.MultiplexerDataProvider(multiplexer, str(out))
    shown = provider.read_scalars(context.RequestContext(), experiment_id="", plugin_name="scalars",
                                  downsample=10**9)
    assert list(shown) == ["."]
    model = parsed(verl_log("032"))
    assert {tag: {d.step: bits(d.value) for d in data} for tag, data in shown["."].items()} == as_dicts(
        model)
    assert len(shown["."]["actor/pg_loss"]) == 1119  # verl's steps, not a 1,000-point sample


def test_a_run_with_a_file_logger_exports_the_exact_values(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "grpo.log").write_text(
        "'experiment_name': 'exp',\n'logger': ['console', 'file'],\n'project_name': 'proj',\n"
        "step:4 - actor/pg_loss:-0.000 - timing_s/gen_max:0.500\n")
    (run / "proj").mkdir()
    shutil.copy(FIXTURES / "jsonl" / "v0.6_json_dumps.jsonl", run / "proj" / "exp.jsonl")
    assert run_export(str(run), None, str(tmp_path / "tb")) == 0
    back = read_back(tmp_path / "tb")
    assert back["actor/pg_loss"][4] == float32(-0.000266974651148999) != -0.0
    assert back["timing_s/gen_max"][4] == 0.5  # only the console had it


def test_refusals_say_why(tmp_path, capsys):
    out = tmp_path / "tb"
    assert run_export(str(verl_log("036")), None, str(out)) == 0
    assert run_export(str(verl_log("036")), None, str(out)) == 3
    assert "already holds event files" in capsys.readouterr().err
    assert run_export(str(tmp_path / "missing.log"), None, str(tmp_path / "a")) == 3
    (tmp_path / "a_file").write_text("")
    assert run_export(str(verl_log("036")), None, str(tmp_path / "a_file")) == 3
    assert "cannot write" in capsys.readouterr().err
    chatter = tmp_path / "chatter.log"
    chatter.write_text("hello\nworld\n")
    assert run_export(str(chatter), None, str(tmp_path / "b")) == 3
    assert "no metrics to export" in capsys.readouterr().err


def test_the_command_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tui", "export", str(verl_log("036")),
                           "--tensorboard", str(tmp_path / "tb")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "tensorboard --logdir" in done.stdout and (tmp_path / "tb").is_dir()


@pytest.mark.parametrize("prefix", ["032", "036", "047"])
def test_event_accumulator_lists_every_key_and_step_as_a_scalar(prefix, tmp_path):
    """Scripts written for verl's own event files (``Scalars()``) read an export the same way."""
    out = tmp_path / "tb"
    assert run_export(str(verl_log(prefix)), None, str(out)) == 0
    assert accumulated(out) == as_dicts(parsed(verl_log(prefix)))


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # tbparse 0.0.9 on pandas 3
def test_tbparse_reads_every_value(tmp_path):
    tbparse = pytest.importorskip("tbparse")
    out = tmp_path / "tb"
    assert run_export(str(verl_log("036")), None, str(out)) == 0
    frame = tbparse.SummaryReader(str(out)).scalars
    read = {}
    for tag, step, value in zip(frame["tag"], frame["step"], frame["value"]):
        read.setdefault(tag, {})[int(step)] = bits(float(value))
    assert read == as_dicts(parsed(verl_log("036")))


def test_an_export_of_verls_own_event_files_reads_as_they_do(tmp_path):
    """A run with only event files (resumed: two files, step 4 done twice, a text summary):
    its export shows in EventAccumulator what verl's own files show, the resumed value of
    step 4 once."""
    run = tmp_path / "run" / "tensorboard_log" / "proj" / "exp"
    shutil.copytree(FIXTURES / "tensorboard" / "resumed", run)
    out = tmp_path / "tb"
    assert run_export(str(tmp_path / "run"), None, str(out)) == 0
    theirs, ours = accumulated(run), accumulated(out)
    assert ours == theirs and "actor/pg_loss" in ours and sorted(ours["actor/pg_loss"]) == [1, 2, 3, 4, 5, 6]


def test_a_bare_jsonl_exports_its_values_as_float32(tmp_path):
    jsonl = FIXTURES / "jsonl" / "v0.7.1_orjson.jsonl"
    out = tmp_path / "tb"
    assert run_export(str(jsonl), None, str(out)) == 0
    exact = parsed(jsonl)
    assert exact.series["actor/pg_loss"].value_at(4) == -0.000266974651148999  # read exact
    assert accumulated(out) == as_dicts(exact)


def test_values_past_float32s_range_become_infinities_as_in_torch(tmp_path):
    log = tmp_path / "big.log"
    log.write_text("step:1 - actor/grad_norm:1e+39 - actor/pg_loss:-1e+39 - critic/score/mean:0.5\n")
    out = tmp_path / "tb"
    assert run_export(str(log), None, str(out)) == 0
    assert read_back(out) == {"actor/grad_norm": {1: math.inf}, "actor/pg_loss": {1: -math.inf},
                              "critic/score/mean": {1: 0.5}}
