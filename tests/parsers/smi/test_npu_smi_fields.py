"""npu-smi's ``Label : value`` grammar (asked ``-t common`` for board power), on every such output."""

import pytest

from tests.parsers.smi.corpus_files import data, smi
from tui.parsers.smi.npu_smi_fields import board_power_w, parse_fields
from tui.parsers.smi.records import SmiFormatError


def test_usages_910b1_chip_id_after_its_fields():
    blocks = parse_fields(data(smi("022")))
    assert blocks[0].fields == {"NPU ID": "0", "Chip Count": "1"}
    assert blocks[1].chip_id == 0 and blocks[1].fields["HBM Bandwidth Usage Rate(%)"] == "0"
    assert blocks[1].fields["HBM Capacity(MB)"] == "65536"


def test_common_910b1_chip_id_before_its_fields_and_the_mcu_block():
    blocks = parse_fields(data(smi("023")))
    assert [(b.npu_id, b.chip_id, b.name) for b in blocks] == [(1, None, None), (1, 0, None), (1, None, "mcu")]
    assert blocks[1].fields["Temperature(C)"] == "46"
    assert board_power_w(blocks) == 93.4


def test_common_310p_board_power_only_in_the_mcu_block():
    blocks = parse_fields(data(smi("031")))
    chips = [block for block in blocks if block.chip_id is not None]
    assert [(chip.fields["Temperature(C)"], "NPU Real-time Power(W)" in chip.fields) for chip in chips] == [
        ("60", False), ("59", False)]
    assert board_power_w(blocks) == 45.2


def test_list_910b4_and_950():
    blocks = parse_fields(data(smi("038")))
    assert blocks[0].fields == {"Total Count": "8"}
    assert [(b.npu_id, b.fields["Chip Count"]) for b in blocks[1:]] == [(n, "1") for n in range(8)]
    (total, card) = parse_fields(data(smi("043")))
    assert (card.npu_id, card.fields["Product Name"], card.fields["Serial Number"]) == (
        0, "A5 PCIe Card", "IT23HMDA0502FAA")


def test_error_text_is_a_status():
    with pytest.raises(SmiFormatError, match="^npu-smi: no Ascend NPU found$"):
        parse_fields("There is no NPU card on this server.\n")
