"""``npu-smi info`` in every layout of the corpus, plus an A3 capture: values per chip."""

import pytest

from tests.parsers.smi.corpus_files import A3, data, smi
from tui.parsers.smi.npu_smi_info import parse_info
from tui.parsers.smi.records import SmiFormatError


def row(chip):
    """(index, npu, chip, name, util, used, total, temp, power)."""
    return (chip.index, chip.npu_id, chip.chip_id, chip.name, chip.util_pct, chip.mem_used_mib,
            chip.mem_total_mib, chip.temp_c, chip.power_w)


def test_910_a_family_uses_the_hbm_pair_not_ddr():
    chips = parse_info(data(smi("020")))
    assert len(chips) == 8
    assert row(chips[0]) == (0, 0, 0, "910B", 0, 0, 32768, 38, 65.7)  # DDR 2382/15038 is not the memory
    assert row(chips[7]) == (7, 7, 0, "910B", 0, 0, 32768, 37, 63.0)
    assert chips[3].bus_id == "0000:01:00.0"
    assert all(chip.processes == () for chip in chips)  # "No running processes found"


def test_910b1_with_an_elided_middle_keeps_the_real_npu_ids():
    chips = parse_info(data(smi("021")))
    assert [row(chip) for chip in chips] == [
        (0, 0, 0, "910B1", 0, 4175, 65536, 46, 88.4),
        (1, 1, 0, "910B1", 0, 4175, 65536, 47, 92.1),
        (7, 7, 0, "910B1", 0, 4174, 65536, 48, 92.7)]


def test_910b3_eight_npus():
    chips = parse_info(data(smi("025")))
    assert [chip.power_w for chip in chips] == [98.2, 96.8, 94.2, 99.9, 92.3, 102.4, 101.6, 98.8]
    assert row(chips[5]) == (5, 5, 0, "910B3", 0, 3433, 65536, 46, 102.4)


def test_910b4_processes_and_five_digit_hbm_glued_to_the_slash():
    first, second = parse_info(data(smi("026")))
    assert row(first) == (0, 0, 0, "910B4-1", 0, 61825, 65536, 40, 78.2)
    assert [(p.pid, p.name, p.mem_used_mib, p.device_index) for p in first.processes] == [
        (19334, "VLLMWorker_TP", 58472, 0)]
    assert [p.pid for p in second.processes] == [19341]


def test_910b4_32gb():
    chips = parse_info(data(smi("039")))
    assert row(chips[7]) == (7, 7, 0, "910B4", 0, 2653, 32768, 37, 81.6)


def test_310p_sparse_npu_ids_ddr_memory_and_na_power():
    chips = parse_info(data(smi("028")))
    assert [chip.npu_id for chip in chips] == [0, 32, 96, 32768, 32800, 32896]
    assert [chip.index for chip in chips] == [0, 1, 2, 3, 4, 5]  # the Device (logical) column
    assert row(chips[3]) == (3, 32768, 0, "310P3", 0, 1852, 21527, 50, None)  # power NA: unknown


def test_310p_duo_two_chips_on_one_card():
    first, second = parse_info(data(smi("036a")))
    assert row(first) == (0, 2, 0, "310P3", 0, 1529, 44280, 45, None)
    assert row(second) == (1, 2, 1, "310P3", 0, 1412, 43693, 43, None)
    assert first.bus_id == second.bus_id == "0000:01:00.0"


def test_ascend_950_split_name_column_and_npu_util():
    (chip,) = parse_info(data(smi("040")))
    assert row(chip) == (0, 0, 0, "xxx", 0, 4439, 86016, 56, 204.4)
    assert chip.bus_id == "0000:91:00.0"


def test_a3_two_dies_per_npu_die_one_power_unknown():
    chips = parse_info(data(A3))
    assert len(chips) == 16
    assert row(chips[0]) == (0, 0, 0, "Ascend910", 7, 61609, 65536, 43, 211.3)
    assert row(chips[1]) == (1, 0, 1, "Ascend910", 7, 61625, 65536, 44, None)  # "-" is unknown
    assert row(chips[15]) == (15, 7, 1, "Ascend910", 7, 61631, 65536, 43, None)
    assert [chip.index for chip in chips] == list(range(16))  # Phy-ID


def test_a3_processes_land_on_their_die_with_empty_names():
    chips = parse_info(data(A3))
    assert len(chips[0].processes) == 8
    assert {p.mem_used_mib for p in chips[0].processes} == {141}
    assert [(p.pid, p.name, p.mem_used_mib) for p in chips[1].processes] == [(929405, "", 58780)]
    assert [(p.pid, p.device_index) for p in chips[14].processes] == [(942487, 14)]


def test_a_table_cut_inside_a_device_keeps_the_whole_ones():
    lines = data(smi("025")).decode().splitlines(keepends=True)
    chips = parse_info("".join(lines[:16]))  # header, three NPUs, then the fourth cut after one row
    assert [chip.npu_id for chip in chips] == [0, 1, 2]


@pytest.mark.parametrize("text", [
    "dcmi model initialized failed, because the device is used. ret is -8020\n",
    "There is no NPU card on this server.\n",
    "bash: npu-smi: command not found\n",
    "",
])
def test_error_text_is_a_status(text):
    with pytest.raises(SmiFormatError) as caught:
        parse_info(text)
    assert str(caught.value).startswith("npu-smi: ")


def test_a_device_missing_its_second_row_does_not_pair_with_the_next_device():
    lines = data(smi("025")).decode().splitlines(keepends=True)
    del lines[10]  # NPU 1's second row
    chips = parse_info("".join(lines))
    assert [chip.npu_id for chip in chips] == [0, 2, 3, 4, 5, 6, 7]
    assert chips[1].power_w == 94.2
