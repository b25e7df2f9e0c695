"""/proc/PID/stat as recorded from real hung trainers (tests/fixtures/logs/generated/hangs and
ddp, NAME_proc.txt, by make/record_states.sh and make/record_gloo_hang.sh) and as read from real processes here, a name with
spaces and parentheses among them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given, strategies as st

from tui.parsers.proc_stat import DEFAULT_HZ, parse_proc_answer, parse_proc_stat

HANGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "generated" / "hangs"


def recorded_answers(name: str, folder: Path = HANGS) -> list[str]:
    """The readings of ``folder``'s ``NAME_proc.txt``, one text per reading (each starts with ``uptime``)."""
    text = (folder / f"{name}_proc.txt").read_text()
    return ["uptime " + part for part in text.split("uptime ") if part]


def test_a_recorded_hang_reads_as_asleep_with_its_wait_channel():
    first, second = (parse_proc_answer(text) for text in recorded_answers("save_blocked_at_step8"))
    assert first is not None and second is not None
    (pid,) = first.stats
    stat = first.stats[pid]
    assert stat is not None and (stat.pid, stat.comm, stat.state) == (pid, "python", "S")
    assert first.wchans[pid] == "wait_for_partner" and first.hz == DEFAULT_HZ
    assert second.uptime_s - first.uptime_s >= 3  # read 3 s apart
    later = second.stats[pid]
    assert later is not None and later.start_ticks == stat.start_ticks and later.ticks >= stat.ticks


def test_the_stopped_trainer_reads_as_stopped():
    answer = parse_proc_answer(recorded_answers("stopped_mid_run")[0])
    assert answer is not None
    assert [stat.state for stat in answer.stats.values() if stat is not None] == ["T"]


def run_named(name: str) -> subprocess.Popen[bytes]:
    """A real Python process that names itself ``name`` (its comm) and sleeps."""
    code = ("import sys, time; open('/proc/self/comm', 'w').write(sys.argv[1]); "
            "print('ok', flush=True); time.sleep(60)")
    process = subprocess.Popen([sys.executable, "-c", code, name], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ok\n"
    return process


def test_a_name_with_spaces_and_parentheses_is_read_from_the_last_parenthesis():
    process = run_named("a) R 1 (b c)")
    try:
        line = Path(f"/proc/{process.pid}/stat").read_text()
        for _ in range(100):  # until it sleeps
            if ") S " in line:
                break
            time.sleep(0.02)
            line = Path(f"/proc/{process.pid}/stat").read_text()
    finally:
        process.kill()
        process.wait()
    assert ") R 1 (b c)) S " in line  # the real line, as the kernel wrote it
    stat = parse_proc_stat(line.strip())
    assert stat is not None
    assert (stat.pid, stat.comm, stat.state, stat.threads) == (process.pid, "a) R 1 (b c)", "S", 1)


def test_this_process_reads_with_its_own_cpu_and_start():
    line = Path("/proc/self/stat").read_text().strip()
    stat = parse_proc_stat(line)
    assert stat is not None and stat.pid == os.getpid() and stat.state == "R"
    times = os.times()
    assert abs(stat.ticks / DEFAULT_HZ - (times.user + times.system)) < 0.5
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    assert 0 <= uptime - stat.start_ticks / DEFAULT_HZ <= time.monotonic() + 1


def test_a_pid_gone_reads_as_none_and_a_running_one_has_no_wait_channel():
    answer = parse_proc_answer("uptime 100.5 80.0\nhz 250\nstat 12 \nwchan 12 \nstat 13 13 (x) R 1 1 1 0 -1 0 "
                               "0 0 0 0 7 3 0 0 20 0 2 0 50\nwchan 13 0\npy-spy /usr/bin/py-spy\n")
    assert answer is not None
    assert answer.stats[12] is None and answer.hz == 250 and answer.py_spy == "/usr/bin/py-spy"
    stat = answer.stats[13]
    assert stat is not None and stat.ticks == 10 and stat.threads == 2 and stat.start_ticks == 50
    assert answer.wchans == {}


def test_what_is_not_an_answer_or_a_stat_line_gives_none():
    assert parse_proc_answer("Last login: Mon\nstat 1 junk\n") is None
    assert parse_proc_stat("12 (x) Q 1 2") is None
    assert parse_proc_stat("x12 (x) S " + "0 " * 30) is None
    assert parse_proc_stat("12 (x) S 1 a b c d e f g h i j k l m n o p q r s") is None


@given(st.text(max_size=300))
def test_any_text_is_read_without_an_error(text: str):
    parse_proc_stat(text)
    parse_proc_answer(text)
