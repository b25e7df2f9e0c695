"""Every smi file of the corpus has a grammar, and no input makes a grammar crash.

The value tests live beside each grammar's tests; this file makes sure a file
added to the corpus without one fails here, and throws cut-off, garbled and
foreign input at every grammar: the answer is readings or ``SmiFormatError``
(a one-line status), never another exception.
"""

from functools import partial

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.parsers.smi.corpus_files import A3, H100_CAPTURE, H100_REAL, SMI
from tests.parsers.smi.test_nvidia_query_csv import H100_REAL_FIELDS
from tui.parsers.smi.amd_smi_table import parse_amd_table
from tui.parsers.smi.npu_smi_fields import chip_samples, parse_fields
from tui.parsers.smi.npu_smi_info import parse_info
from tui.parsers.smi.npu_smi_mapping import parse_mapping
from tui.parsers.smi.npu_smi_topo import parse_topo
from tui.parsers.smi.nvidia_dmon import parse_dmon
from tui.parsers.smi.nvidia_query_csv import parse_compute_apps, parse_gpus
from tui.parsers.smi.nvidia_query_text import parse_query_text
from tui.parsers.smi.nvidia_table import parse_table
from tui.parsers.smi.nvidia_xml import parse_xml
from tui.parsers.smi.records import SmiFormatError
from tui.parsers.smi.rocm_smi_json import parse_rocm_json


def _fields(data):
    return chip_samples(parse_fields(data))


# File-name part → the grammar that reads it (errors and cut files included: they must give a status).
GRAMMARS = {
    "_nvidia-smi_table_": parse_table, "_nvidia-smi_query-compute-apps_": parse_compute_apps,
    "_nvidia-smi_query-gpu-csv-allfields_": parse_gpus, "_nvidia-smi_q-text_": parse_query_text,
    "_nvidia-smi_q-x-xml_": parse_xml, "_nvidia-smi_error_": parse_gpus,
    "019a_": partial(parse_gpus, fields="memory.total,memory.free,memory.used,temperature.gpu,fan.speed,"
                                        "utilization.gpu,utilization.memory".split(",")),
    "019c_": parse_gpus, "_npu-smi_info_": parse_info, "_npu-smi_usages_": _fields,
    "_npu-smi_common_": _fields, "_npu-smi_list-l_": parse_fields, "_npu-smi_mapping-m_": parse_mapping,
    "_npu-smi_topo_": parse_topo, "_rocm-smi_json": parse_rocm_json, "_amd-smi_default-table_": parse_amd_table,
    "_amd-smi_metric-json_": parse_rocm_json,
    "nvidia-smi_default_": parse_table, "nvidia-smi_q_x_": parse_xml, "dmon.txt": parse_dmon,
    "query_gpu_csv_idle.txt": parse_gpus, "bad_field.txt": parse_gpus,
    "query_gpu_busy.txt": partial(parse_gpus, fields=H100_REAL_FIELDS),
    "query_loop.txt": partial(parse_gpus, fields=["index", "utilization.gpu", "memory.used", "memory.total",
                                                  "temperature.gpu", "power.draw"]),
    "query_gpu_idle.csv": parse_gpus, "query_gpu_load.csv": parse_gpus, "query_gpu_loop_load.csv": parse_gpus,
    "query_compute_apps_load.csv": parse_compute_apps,
    "npu-smi_info_A3": parse_info,
}
FAILURES = {"015", "017", "053", "bad_field.txt"}  # files that ARE failure output or cut-off JSON
FILES = sorted([*SMI.glob("[0-9]*"), *H100_REAL.iterdir(), *H100_CAPTURE.glob("*.csv"), A3])


def grammar(path):
    found = [parse for part, parse in GRAMMARS.items() if part in path.name]
    assert len(found) == 1, f"{path.name}: no grammar (or several) claims it"
    return found[0]


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
