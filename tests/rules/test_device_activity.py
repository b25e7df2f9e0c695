"""Whether anything still happens on the devices since the last step, on real readings: the
2×H200 NCCL hang of tests/fixtures/logs/generated/ddp (nvidia-smi read twice, 11 s apart, while
rank 1 slept before an all-reduce and rank 0 waited in it) and an H100 computing at its power
cap (tests/fixtures/corpus/smi/h100_real/query_loop.txt): both busy at flat power, only one
waiting."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.support import hang_readings, history_of
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.parsers.smi.nvidia_query_csv import parse_gpus
from tui.parsers.smi.records import on_host
from tui.rules.device_activity import IDLE, RELEASED, SPINNING, UNCLEAR, activity_words, device_activity
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import load_rules

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DDP = FIXTURES / "logs" / "generated" / "ddp"
LOOP = FIXTURES / "corpus" / "smi" / "h100_real" / "query_loop.txt"
T0 = 2_000_000_000.0


def test_a_rank_waiting_in_an_all_reduce_spins_beside_the_idle_rank_it_waits_for():
    history = history_of(hang_readings(), T0)
    gpu0, gpu1 = device_activity(history, since=T0 - 5)
    assert (gpu0.name, gpu0.state, round(gpu0.power_w or 0)) == ("localhost:0", SPINNING, 168)
    assert (gpu1.name, gpu1.state) == ("localhost:1", IDLE)
    words = activity_words([gpu0, gpu1], "since step 4")
    assert words is not None and words.startswith("devices since step 4: localhost:0 busy with flat power")
    assert "the rank on an idle device is usually the one the others wait for" in words


def test_a_gpu_computing_at_its_power_cap_is_not_called_stuck():
    """697–700 W, flat: with nothing to compare it with, it is not said to be waiting."""
    rows = [on_host(parse_gpus(line, ("index", "utilization.gpu", "memory.used", "memory.total",
                                      "temperature.gpu", "power.draw")), "box")
            for line in LOOP.read_text().splitlines() if line.startswith("0, ")]
    history = history_of([(float(second), samples) for second, samples in enumerate(rows)], T0)
    (gpu,) = device_activity(history, since=T0)
    assert gpu.state == UNCLEAR and gpu.readings == 4


def test_readings_before_the_last_step_are_not_since_it():
    history = history_of(hang_readings(), T0)
    assert device_activity(history, since=T0 + 5) == []  # one reading since: says nothing


def test_memory_given_back_is_a_process_gone():
    """The hang's readings, then the same devices as nvidia-smi shows them with no process
    (0 MiB, 0 %): built from the real rows, only memory and utilisation changed."""
    readings = hang_readings()
    gone = [replace(sample, mem_used_mib=0.0, util_pct=0.0) for sample in readings[-1][1]]
    history = history_of(readings + [(readings[-1][0] + 10, gone), (readings[-1][0] + 20, gone)], T0)
    activities = device_activity(history, since=T0 + 15)
    assert [a.state for a in activities] == [RELEASED, RELEASED]
    assert (activity_words(activities, "since step 4") or "").endswith("the run's processes are gone")


def test_the_stalled_finding_says_what_the_devices_do():
    model = RunModel()
    scanner = LogScanner()
    model.apply(scanner.feed((DDP / "nccl_rank1_hang_still_hanging.log").read_bytes()) + scanner.finish(), now=T0)
    model.note_write(T0)
    history = history_of(hang_readings(), T0 + 3000)
    (stalled,) = [f for f in RuleEngine(load_rules()).evaluate(model, T0 + 3600, accelerators=history)
                  if f.rule == "stalled"]
    assert stalled.message.split(";")[0].endswith(", where: unknown")
    assert "; devices since step 4: localhost:0 busy with flat power and memory" in stalled.message
    assert "localhost:1 idle (0 %, 123 W, 1663 MiB; 2 readings)" in stalled.message
