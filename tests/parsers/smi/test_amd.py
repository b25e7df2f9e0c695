"""AMD: ``rocm-smi --json`` and ``amd-smi``'s default table from the corpus."""

import pytest

from tests.parsers.smi.corpus_files import data, smi
from tui.parsers.smi.amd_smi_table import parse_amd_table
from tui.parsers.smi.records import SmiFormatError
from tui.parsers.smi.rocm_smi_json import parse_rocm_json


def test_rocm_smi_mi100_cards_in_bytes_become_mib():
    cards = parse_rocm_json(data(smi("050")))
    assert [card.index for card in cards] == [0, 1, 2, 3]
    first = cards[0]
    assert (first.name, first.uuid, first.bus_id) == ("Arcturus GL-XL [Instinct MI100]", "0x79ccd55167a2124a",
                                                      "0000:83:00.0")
    assert (first.util_pct, first.temp_c, first.power_w) == (0, 53, 36)
    assert first.mem_total_mib == pytest.approx(34342961152 / 2**20)
    assert first.mem_used_mib == pytest.approx(6750208 / 2**20)
    assert cards[1].power_w == 44


def test_rocm_smi_rx6700xt_with_a_system_object_and_no_unique_id():
    (card,) = parse_rocm_json(data(smi("051")))
    assert (card.name, card.uuid, card.util_pct, card.temp_c, card.power_w) == (
        "Navi 22 [Radeon RX 6700/6700 XT / 6800M]", None, 0, 45, 6)
    assert card.mem_used_mib == pytest.approx(1572745216 / 2**20)


def test_amd_smi_metric_json_cut_by_head_is_a_clear_status():
    with pytest.raises(SmiFormatError, match="JSON output cut off"):
        parse_rocm_json(data(smi("053")))


def test_amd_smi_metric_json_shape_is_named_not_misread():
    with pytest.raises(SmiFormatError, match="amd-smi metric output is not read"):
        parse_rocm_json('{"gpu_data": [{"gpu": 0}]}')


def test_amd_smi_default_table_two_gpus_and_their_processes():
    first, second = parse_amd_table(data(smi("052")))
    assert (first.index, first.name, first.bus_id) == (0, "...Radeon AI PRO R9700", "0000:03:00.0")
    assert (first.util_pct, first.mem_used_mib, first.mem_total_mib, first.temp_c, first.power_w) == (
        100, 29777, 32624, 79, 103)
    assert (second.temp_c, second.power_w) == (80, 92)
    assert [(p.pid, p.mem_used_mib) for p in first.processes][2:] == [(213952, 19.6 * 1024), (213953, 19.1 * 1024)]
    assert len(second.processes) == 4


def test_amd_table_on_an_error():
    with pytest.raises(SmiFormatError, match="^amd-smi: "):
        parse_amd_table("ERROR: No AMD GPUs found\n")
