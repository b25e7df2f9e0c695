"""Every smi file of the corpus is read by a grammar rlwatch polls with, or is named as not
read and why; and no input makes a grammar crash.

The value tests live beside each grammar's tests; this file makes sure a file
added to the corpus is looked at here, and throws cut-off, garbled and
foreign input at every grammar: the answer is readings or ``SmiFormatError``
(a one-line status), never another exception.
"""

from functools import partial

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.parsers.smi.corpus_files import A3, H100_CAPTURE, H100_REAL, SMI
from tests.support import H100_REAL_FIELDS
from tui.parsers.smi.amd_smi_table import parse_amd_table
from tui.parsers.smi.npu_smi_fields import parse_fields
from tui.parsers.smi.npu_smi_info import parse_info
from tui.parsers.smi.nvidia_query_csv import parse_compute_apps, parse_gpus
from tui.parsers.smi.records import SmiFormatError
from tui.parsers.smi.rocm_smi_json import parse_rocm_json

# File-name part → the grammar that reads it (errors and cut files included: they must give a status).
GRAMMARS = {
    "_nvidia-smi_query-compute-apps_": parse_compute_apps,
    "_nvidia-smi_query-gpu-csv-allfields_": parse_gpus, "_nvidia-smi_error_": parse_gpus,
    "019a_": partial(parse_gpus, fields="memory.total,memory.free,memory.used,temperature.gpu,fan.speed,"
                                        "utilization.gpu,utilization.memory".split(",")),
    "019c_": parse_gpus, "_npu-smi_info_": parse_info, "_npu-smi_usages_": parse_fields,
    "_npu-smi_common_": parse_fields, "_npu-smi_list-l_": parse_fields,
    "_rocm-smi_json": parse_rocm_json, "_amd-smi_default-table_": parse_amd_table,
    "_amd-smi_metric-json_": parse_rocm_json,
    "query_gpu_csv_idle.txt": parse_gpus, "bad_field.txt": parse_gpus,
    "query_gpu_busy.txt": partial(parse_gpus, fields=H100_REAL_FIELDS),
    "query_loop.txt": partial(parse_gpus, fields=["index", "utilization.gpu", "memory.used", "memory.total",
                                                  "temperature.gpu", "power.draw"]),
    "query_gpu_idle.csv": parse_gpus, "query_gpu_load.csv": parse_gpus, "query_gpu_loop_load.csv": parse_gpus,
    "query_compute_apps_load.csv": parse_compute_apps,
    "npu-smi_info_A3": parse_info,
}
# Outputs rlwatch never asks a tool for, so no grammar reads them (their grammars were
# deleted with nothing calling them): nvidia-smi is asked ``--query-gpu``/``--query-compute-apps``
# (every driver in the corpus, back to 367.48, answers them), npu-smi ``info`` and ``-t``.
NOT_ASKED = {
    "_nvidia-smi_table_": "the default table", "nvidia-smi_default_": "the default table",
    "_nvidia-smi_q-text_": "the -q report", "_nvidia-smi_q-x-xml_": "the -q -x XML report",
    "nvidia-smi_q_x_": "the -q -x XML report", "dmon.txt": "dmon",
    "_npu-smi_mapping-m_": "the -m chip mapping", "_npu-smi_topo_": "the topology",
}
FAILURES = {"015", "017", "053", "bad_field.txt"}  # files that ARE failure output or cut-off JSON
ALL_FILES = sorted([*SMI.glob("[0-9]*"), *H100_REAL.iterdir(), *H100_CAPTURE.glob("*.csv"), A3])
FILES = [path for path in ALL_FILES if not any(part in path.name for part in NOT_ASKED)]


def grammar(path):
    found = [parse for part, parse in GRAMMARS.items() if part in path.name]
    assert len(found) == 1, f"{path.name}: no grammar (or several) claims it"
    return found[0]


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda path: path.name)
def test_every_file_is_read_or_named_as_not_asked_for(path):
    claims = [part for part in [*GRAMMARS, *NOT_ASKED] if part in path.name]
    assert len(claims) == 1, f"{path.name}: neither a grammar nor NOT_ASKED claims it (or several do)"


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_every_file_reads_or_gives_a_status(path):
    parse = grammar(path)
    if path.name.split("_")[0] in FAILURES or path.name in FAILURES:
        with pytest.raises(SmiFormatError):
            parse(path.read_bytes())
    else:
        assert parse(path.read_bytes())


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(path=st.sampled_from(FILES), cut=st.floats(0, 1), junk=st.binary(max_size=80), where=st.floats(0, 1))
def test_cut_and_garbled_input_never_raises_anything_else(path, cut, junk, where):
    parse = grammar(path)
    data = path.read_bytes()
    data = data[:int(len(data) * cut)]
    at = int(len(data) * where)
    for attempt in (data, data[:at] + junk + data[at:]):
        try:
            result = parse(attempt)
        except SmiFormatError as error:
            assert str(error) and "\n" not in str(error)
        else:
            assert isinstance(result, list)


@pytest.mark.parametrize("parse", sorted(set(GRAMMARS.values()), key=repr))
@pytest.mark.parametrize("path", [FILES[0], A3, SMI / "050_rocm-smi_json-allflags_MI100x2_rocm6.0.2.json.txt"],
                         ids=lambda path: path.name[:12])
def test_each_grammar_on_foreign_output(parse, path):
    try:
        parse(path.read_bytes())
    except SmiFormatError:
        pass
