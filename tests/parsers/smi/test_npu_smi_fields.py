"""npu-smi's ``Label : value`` outputs (``-t usages``, ``-t common``, ``-l``), ``-m`` and ``topo``."""

import pytest

from tests.parsers.smi.corpus_files import data, smi
from tui.parsers.smi.npu_smi_fields import board_power_w, chip_samples, parse_fields
from tui.parsers.smi.npu_smi_mapping import parse_mapping
from tui.parsers.smi.npu_smi_topo import parse_topo
from tui.parsers.smi.records import SmiFormatError


def row(chip):
    return (chip.npu_id, chip.chip_id, chip.util_pct, chip.mem_used_mib, chip.mem_total_mib, chip.temp_c,
            chip.power_w)


def test_usages_910b1_chip_id_after_its_fields():
    blocks = parse_fields(data(smi("022")))
    assert blocks[0].fields == {"NPU ID": "0", "Chip Count": "1"}
    assert blocks[1].chip_id == 0 and blocks[1].fields["HBM Bandwidth Usage Rate(%)"] == "0"
    (chip,) = chip_samples(blocks)
    assert row(chip) == (0, 0, 0, 2621.4, 65536, None, None)  # 4 % of 65536 MiB


def test_common_910b1_chip_id_before_its_fields_and_the_mcu_block():
    blocks = parse_fields(data(smi("023")))
    assert [(b.npu_id, b.chip_id, b.name) for b in blocks] == [(1, None, None), (1, 0, None), (1, None, "mcu")]
    (chip,) = chip_samples(blocks)
    assert row(chip) == (1, 0, 0, None, None, 46, 93.4)
    assert board_power_w(blocks) == 93.4


def test_usages_310p_two_chips_ddr_only():
    first, second = chip_samples(parse_fields(data(smi("030"))))
    assert row(first) == (1, 0, 0, 1328.4, 44280, None, None)
    assert row(second) == (1, 1, 0, 1310.8, 43693, None, None)


def test_common_310p_board_power_only_in_the_mcu_block():
    blocks = parse_fields(data(smi("031")))
    first, second = chip_samples(blocks)
    assert (first.temp_c, second.temp_c, first.power_w, second.power_w) == (60, 59, None, None)
    assert board_power_w(blocks) == 45.2


def test_usages_910_32gb_hbm_over_ddr():
    (chip,) = chip_samples(parse_fields(data(smi("033"))))
    assert row(chip) == (0, 0, 0, 0, 32768, None, None)


def test_usages_ascend_950_without_chip_lines():
    (chip,) = chip_samples(parse_fields(data(smi("041"))))
    assert row(chip) == (0, 0, 0, 3932.2, 131072, None, None)  # NPU Utilization 0, HBM 3 %


def test_list_910b4_and_950():
    blocks = parse_fields(data(smi("038")))
    assert blocks[0].fields == {"Total Count": "8"}
    assert [(b.npu_id, b.fields["Chip Count"]) for b in blocks[1:]] == [(n, "1") for n in range(8)]
    assert chip_samples(blocks) == []  # a list holds no readings
    (total, card) = parse_fields(data(smi("043")))
    assert (card.npu_id, card.fields["Product Name"], card.fields["Serial Number"]) == (
        0, "A5 PCIe Card", "IT23HMDA0502FAA")


def test_mapping_310p_duo_with_mcu_rows():
    rows = parse_mapping(data(smi("032")))
    assert len(rows) == 12
    assert [(r.npu_id, r.chip_id, r.logic_id, r.name) for r in rows[:3]] == [
        (1, 0, 0, "Ascend xxx"), (1, 1, 1, "Ascend xxx"), (1, 2, None, "Mcu")]
    assert [r.logic_id for r in rows if r.is_compute] == list(range(8))


def test_mapping_910b4_chip_name_with_a_space_and_trailing_padding():
    rows = parse_mapping(data(smi("037")))
    assert [(r.npu_id, r.logic_id, r.name) for r in rows if r.is_compute] == [
        (n, n, "Ascend 910B4") for n in range(8)]


def test_mapping_950_slot_and_phy_id():
    (mapping,) = parse_mapping(data(smi("042")))
    assert (mapping.npu_id, mapping.chip_id, mapping.logic_id, mapping.phy_id, mapping.name) == (0, 0, None, 0, "xxx")


def test_topo_links_and_cpu_affinity():
    rows = parse_topo(data(smi("024")))
    assert len(rows) == 8
    assert rows[0].links["NPU0"] == "X" and rows[0].links["NPU5"] == "HCCS"
    assert [r.cpu_affinity for r in rows] == ["144-167", "0-23", "144-167", "0-23", "96-119", "48-71",
                                              "96-119", "48-71"]


@pytest.mark.parametrize("parse", [parse_fields, parse_mapping, parse_topo])
def test_error_text_is_a_status(parse):
    with pytest.raises(SmiFormatError, match="^npu-smi: no Ascend NPU found$"):
        parse("There is no NPU card on this server.\n")
