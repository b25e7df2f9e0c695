"""Accelerator history: devices keyed by host+UUID, bounded memory, spike-keeping sparklines."""

import math

from tests.parsers.smi.corpus_files import A3, data, smi
from tui.model.accelerators import AcceleratorHistory
from tui.parsers.smi.npu_smi_info import parse_info
from tui.parsers.smi.amd_smi_table import parse_amd_table
from tui.parsers.smi.records import AcceleratorSample, on_host


def gpu(host="node1", index=0, uuid="GPU-a", util=50.0, used=1000.0, temp=40.0, power=300.0):
    return AcceleratorSample(host=host, index=index, uuid=uuid, name="NVIDIA H100 80GB HBM3", util_pct=util,
                             mem_used_mib=used, mem_total_mib=81559.0, temp_c=temp, power_w=power)


def test_devices_are_keyed_by_host_and_uuid_not_index():
    history = AcceleratorHistory()
    history.add([gpu(index=0, uuid="GPU-a"), gpu(index=1, uuid="GPU-b")], at=0)
    history.add([gpu(index=1, uuid="GPU-a"), gpu(index=0, uuid="GPU-b")], at=1)  # renumbered after a reboot
    history.add([gpu(host="node2", index=0, uuid="GPU-a")], at=1)  # same UUID text on another host
    assert len(history.devices()) == 3
    assert [len(device.fine) for device in history.devices("node1")] == [2, 2]
    assert [device.host for device in history.devices()] == ["node1", "node1", "node2"]


def test_npu_dies_without_uuid_are_keyed_by_index():
    history = AcceleratorHistory()
    history.add(on_host(parse_info(data(A3)), "a3"), at=0)
    history.add(on_host(parse_info(data(A3)), "a3"), at=2)
    devices = history.devices("a3")
    assert len(devices) == 16
    assert devices[1].latest.power_w is None and devices[1].latest.chip_id == 1
    assert devices[1].recent("power_w", 10) == []  # unknown is not recorded as 0
    assert devices[1].recent("mem_used_mib", 10) == [(0, 61625), (2, 61625)]


def test_latest_is_the_newest_reading_in_display_order():
    history = AcceleratorHistory()
    history.add(on_host(parse_amd_table(data(smi("052"))), "desk"), at=5)
    assert [(s.index, s.temp_c) for s in history.latest()] == [(0, 79), (1, 80)]


def test_memory_is_bounded_for_days_of_one_second_samples():
    history = AcceleratorHistory(fine_capacity=3600, coarse_capacity=7 * 24 * 60, bucket_s=60)
    three_days = 3 * 24 * 3600
    for second in range(0, three_days, 7):  # every 7 s keeps the test fast; capacity is what matters
        history.add([gpu(util=float(second % 100))], at=second)
    (device,) = history.devices()
    assert len(device.fine) == 3600
    assert len(device.coarse) == three_days // 60 - 1  # whole minutes; the current one is in progress
    last = (three_days - 1) // 7 * 7
    assert device.fine.oldest() == last - 3599 * 7  # the ring dropped the oldest raw readings
    size = sum(column.buffer_info()[1] * column.itemsize for column in [device.fine.times, *device.fine.lows,
                                                                        device.coarse.times, *device.coarse.lows,
                                                                        *device.coarse.highs])
    assert size < 600_000  # bytes per device, however long the run


def test_a_one_sample_spike_survives_a_week_long_sparkline():
    history = AcceleratorHistory(fine_capacity=600, coarse_capacity=7 * 24 * 60, bucket_s=60)
    week = 7 * 24 * 3600
    for second in range(0, week, 30):
        history.add([gpu(used=70000.0 if second == 3 * 24 * 3600 else 1000.0)], at=second)
    (device,) = history.devices()
    line = device.sparkline("mem_used_mib", width=40, span_s=week)
    assert max(high for _, high in filter(None, line)) == 70000  # never averaged away
    assert min(low for low, _ in filter(None, line)) == 1000
    assert sum(1 for column in line if column and column[1] == 70000) == 1


def test_short_sparkline_uses_raw_readings_and_marks_gaps():
    history = AcceleratorHistory()
    for second in (0, 1, 2, 3, 8, 9):  # a five-second gap (the tool failed)
        history.add([gpu(util=float(second * 10))], at=second)
    (device,) = history.devices()
    line = device.sparkline("util_pct", width=10, span_s=10, now=10)
    assert line[0] == (0, 0) and line[3] == (30, 30)
    assert line[5] is None and line[6] is None
    assert line[9] == (90, 90)


def test_unknown_readings_leave_columns_empty_not_zero():
    history = AcceleratorHistory()
    for second in range(5):
        history.add([gpu(util=None)], at=second)
    (device,) = history.devices()
    assert device.sparkline("util_pct", 5, 5) == [None] * 5
    assert device.latest.util_pct is None


def test_time_never_runs_backwards():
    history = AcceleratorHistory()
    history.add([gpu(used=1.0)], at=100)
    history.add([gpu(used=2.0)], at=50)  # a clock step back
    (device,) = history.devices()
    assert [t for t, _ in device.recent("mem_used_mib", 10)] == [100, 100]


def test_status_per_host():
    history = AcceleratorHistory()
    history.set_status("node2", "nvidia-smi: no NVIDIA devices found", ok=False, at=3)
    assert history.status["node2"].text == "nvidia-smi: no NVIDIA devices found"
    assert not history.status["node2"].ok
    assert math.isclose(history.status["node2"].at, 3)
