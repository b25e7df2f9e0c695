"""nvidia-smi's full reports (``-q`` text, ``-q -x`` XML) and ``dmon``, from the corpus."""

import pytest

from tests.parsers.smi.corpus_files import H100_REAL, data, smi
from tui.parsers.smi.nvidia_dmon import parse_dmon
from tui.parsers.smi.nvidia_query_text import parse_query_text
from tui.parsers.smi.nvidia_xml import parse_xml
from tui.parsers.smi.records import SmiFormatError


def readings(gpu):
    return (gpu.name, gpu.util_pct, gpu.mem_used_mib, gpu.mem_total_mib, gpu.temp_c, gpu.power_w)


@pytest.mark.parametrize(("path", "uuid", "expected", "processes"), [
    (smi("011"), "GPU-513536b6-7d19-9063-b049-1e69664bb298",
     ("NVIDIA A100-SXM4-80GB", None, 50, 81920, 27, 67.03), []),
    (smi("012"), "GPU-d37e67a5-91dd-3774-a5cb-99096249601a",
     ("Tesla T4", 0, 1032, 15360, 40, 26.78), [(675, "/usr/lib/xorg/Xorg", 22), (5762, "python", 1005)]),
    (smi("013"), "GPU-8f750be4-dfbc-23b9-b33f-da729a536494",
     ("Quadro P400", 0, 0, 1998, 33, None), []),
    (H100_REAL / "nvidia-smi_q_x_busy.xml", "GPU-da618c8b-ec49-272c-0c77-591f79f5f945",
     ("NVIDIA H100 80GB HBM3", 100, 31859, 81559, 50, 699.70), [(407, "python3", 31850)]),
])
def test_xml_reports_across_dtd_versions(path, uuid, expected, processes):
    (gpu,) = parse_xml(data(path))
    assert gpu.uuid == uuid
    assert readings(gpu) == expected  # MIG's gpu_util N/A is unknown; P400's power N/A too
    assert [(p.pid, p.name, p.mem_used_mib) for p in gpu.processes] == processes


def test_cut_off_xml_says_so():
    with pytest.raises(SmiFormatError, match="XML report cut off"):
        parse_xml(data(H100_REAL / "nvidia-smi_q_x_busy.xml")[:5000])


def test_xml_parser_on_an_error_message():
    with pytest.raises(SmiFormatError, match="cannot talk to the NVIDIA driver"):
        parse_xml(data(smi("015")))


def test_query_text_reads_the_gpu_not_its_mig_devices():
    (gpu,) = parse_query_text(data(smi("010")))
    assert gpu.uuid == "GPU-00000000-0000-0000-0000-000000000000"
    assert gpu.bus_id == "00000000:00:09.0"
    assert readings(gpu) == ("NVIDIA H100 80GB HBM3", None, 11125, 81559, 53, 432.21)
    assert [(p.pid, p.name, p.mem_used_mib) for p in gpu.processes] == [
        (21180, "/root/tools/memhog", 2296), (21181, "/root/tools/memhog", 1272), (21198, "./gpu_burn", 7484)]


def test_query_text_without_gpus():
    with pytest.raises(SmiFormatError, match="no NVIDIA devices found"):
        parse_query_text(data(smi("017")))


def test_dmon_rows_by_column_name():
    rows = parse_dmon(data(H100_REAL / "dmon.txt"))
    assert [(gpu.index, gpu.power_w, gpu.temp_c, gpu.util_pct) for gpu in rows] == [(0, 698, 54, 100),
                                                                                      (0, 699, 53, 100)]
    assert all(gpu.mem_used_mib is None and gpu.uuid is None for gpu in rows)
