"""A stalled run whose log names no pid, read by who writes its log: real launches here (a
trainer piped into ``tee``, one redirected into the log by its shell, each with child "ranks"
of its own), found on this machine's /proc by the session and said by the stalled finding;
a reader of the log (``tail -f``) is not taken for a writer, and a log nobody writes any more
says so without an error."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from tests.session.test_process_states import AN_HOUR, stalled_after_reading
from tests.support import rlwatch
from tui.rules.stall_explanation import explain_stall
from tui.session.run_session import RunSession
from tui.sources.accelerators.hosts import AcceleratorHost, this_host
from tui.sources.accelerators.runner import LocalRunner
from tui.sources.base import SourceError
from tui.sources.local_file import LocalFile
from tui.sources.log_writers import read_log_writers

# A launcher that starts ``ranks`` child processes (each asleep, as a rank waiting in a
# collective is) and prints three steps in verl's form with no pid anywhere, then hangs; it
# writes its pid and its ranks' into the file its first argument names.
TRAINER = """
import os, subprocess, sys, time
ranks = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]) for _ in range(int(sys.argv[2]))]
for step in range(1, 4):
    print(f"step:{step} - train/loss:{1 / step:.4f} - timing_s/step:0.1000", flush=True)
    time.sleep(0.1)
with open(sys.argv[1] + ".tmp", "w") as pids:
    pids.write(" ".join(str(pid) for pid in [os.getpid(), *(rank.pid for rank in ranks)]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)
"""
# How a launch script captures the run: ``… 2>&1 | tee LOG``, or the shell's redirect.
TEE = '"$0" -c "$1" "$2" "$3" 2>&1 | tee -- "$4"'
REDIRECT = '{ "$0" -c "$1" "$2" "$3"; } >"$4" 2>&1'

# This machine read by the box's script (``sh -c``, its argv quoted by no shell), as a remote
# host is, rather than by reading /proc here.
BY_SCRIPT = AcceleratorHost(LocalRunner(), "here, by the script", False)


def state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@contextmanager
def launched(log: Path, capture: str, ranks: int = 2) -> Iterator[list[int]]:
    """The trainer started by ``sh -c CAPTURE`` (its own session, ended with it), once its
    steps are written and its processes asleep: the launcher's pid, then its ranks'."""
    pids_file = log.parent / f"pids-{os.getpid()}-{time.monotonic_ns()}"
    shell = subprocess.Popen(["sh", "-c", capture, sys.executable, TRAINER, str(pids_file), str(ranks), str(log)],
                             start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not pids_file.exists() or not all(state(int(pid)) == "S" for pid in pids_file.read_text().split()):
            assert time.monotonic() < deadline and shell.poll() is None, "the trainer did not start"
            time.sleep(0.02)
        yield [int(pid) for pid in pids_file.read_text().split()]
    finally:
        os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()


@contextmanager
def tail_f(log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``tail -f LOG`` reading the log meanwhile: it has the log open, read-only."""
    reader = subprocess.Popen(["tail", "-f", "--", str(log)], stdout=subprocess.DEVNULL)
    try:
        yield reader
    finally:
        reader.kill()
        reader.wait()


async def test_a_run_piped_into_tee_is_read_by_its_ranks_and_its_launcher(tmp_path: Path):
    log = tmp_path / "grpo.log"
    with launched(log, TEE) as (launcher, *ranks):
        comm = Path(f"/proc/{launcher}/comm").read_text().strip()
        session = RunSession(LocalFile(log))
        finding = await stalled_after_reading(session)
    assert session.model.steps_pid is None  # the log names no pid
    said = re.findall(r"pid (\d+) \(([^)]*)\) asleep \(S, waiting in (\w+)[^)]*\), 0 % CPU over 0\.\d+ s, up [^(]+ "
                      r"\((writes the log through tee \(pid \d+\)), on ", finding.message)
    assert [(int(pid), name) for pid, name, _, _ in said] == [(ranks[0], comm), (ranks[1], comm), (launcher, comm)]
    assert {wchan for _, _, wchan, _ in said} == {"hrtimer_nanosleep"}, finding.message
    writers = session.model.processes.writers
    assert writers is not None and [one.pid for one in writers.found] == [*ranks, launcher]


async def test_a_shell_redirect_is_read_by_its_python_not_by_the_shell_nor_a_reader(tmp_path: Path):
    log = tmp_path / "run.log"
    with launched(log, REDIRECT, ranks=1) as (launcher, rank), tail_f(log) as reader:
        session = RunSession(LocalFile(log))
        finding = await stalled_after_reading(session)
    writers = session.model.processes.writers
    assert writers is not None and [(one.pid, one.origin) for one in writers.found] == \
        [(rank, "writes the log"), (launcher, "writes the log")]
    assert f"pid {rank} (" in finding.message and f"pid {reader.pid} " not in finding.message


async def test_a_run_that_died_after_it_was_read_reads_gone_and_then_unwritten(tmp_path: Path):
    log = tmp_path / "run.log"
    with launched(log, TEE, ranks=1) as (launcher, rank):
        session = RunSession(LocalFile(log))
        finding = await stalled_after_reading(session)
        assert f"pid {rank} (" in finding.message
    assert await session.read_stuck_processes(pause_s=0.1)  # killed since: none writes the log
    (finding,) = session.judge(time.time() + AN_HOUR)
    assert f"pid {rank} gone: no such process on " in finding.message
    assert finding.message.endswith("the run's processes have ended")


async def test_a_log_nobody_writes_says_so_without_an_error(tmp_path: Path):
    log = tmp_path / "run.log"
    log.write_text("".join(f"step:{step} - train/loss:0.5 - timing_s/step:0.1000\n" for step in range(1, 4)))
    with tail_f(log):
        session = RunSession(LocalFile(log))
        finding = await stalled_after_reading(session)
    assert finding.message.endswith(f"; processes: nothing on {this_host().name} has the log open for writing "
                                    "(the run's processes have ended, or it is written from another machine)")
    assert session.model.processes.latest(0) == []
    # the "why is it stuck" view says it too, and where it looked
    items = explain_stall(session.model, time.time() + AN_HOUR, limits=None).items
    (said,) = [item for item in items if item.source.kind == "process"]
    assert said.says.startswith(f"Nothing on {this_host().name} has the log open for writing (")
    assert said.source.words() == (f"/proc/*/fd on {this_host().name}: every open file of the account's "
                                   "processes; none of them is the log, opened to write")


async def test_a_log_that_is_gone_finds_no_writer_and_a_dump_says_why(tmp_path: Path):
    scan, answers = await read_log_writers(this_host(), str(tmp_path / "never written"), 0)
    assert (scan.writers, scan.feeds, len(answers)) == ({}, {}, 1)
    log = tmp_path / "run.log"
    log.write_text("step:1 - train/loss:0.5\n")
    session = RunSession(LocalFile(log))
    await session.load()
    try:
        await session.py_spy_dump()
    except SourceError as error:
        assert str(error) == ("no trainer pid known: the log's steps carry no process prefix, no device "
                              "lists a process and nothing here has the log open for writing")
    else:
        raise AssertionError("a dump of no process")


async def test_a_hostile_log_path_finds_its_writer_and_runs_nothing(tmp_path: Path, monkeypatch):
    folder = tmp_path / "$(touch PWNED) `touch PWNED`"
    folder.mkdir()
    monkeypatch.chdir(folder)
    name = "-n x;touch PWNED\nnew line (deleted)"
    with launched(Path(name), TEE, ranks=0) as (launcher,):
        scans = [(await read_log_writers(host, path, 0))[0] for host in (this_host(), BY_SCRIPT)
                 for path in (name, str(folder / name))]
    assert len(scans[0].writers) == 1 and scans[0].feeds == dict.fromkeys(scans[0].writers, frozenset({launcher}))
    assert scans == [scans[0]] * 4
    assert [path.name for path in folder.iterdir() if not path.name.startswith("pids-")] == [name]


async def test_the_box_script_and_the_direct_read_say_the_same(tmp_path: Path):
    log = tmp_path / "grpo.log"
    with launched(log, TEE) as pids:
        (here, (read_here,)), (there, (read_there,)) = [await read_log_writers(host, str(log), 0)
                                                        for host in (this_host(), BY_SCRIPT)]
        assert here == there and here.feeds and here.writers
        for pid in pids:  # asleep: the same stat in both
            assert read_here.stats[pid] == read_there.stats[pid] is not None


def test_check_reads_a_stalled_tee_run_by_its_writers_in_text_json_and_openmetrics(tmp_path: Path):
    rules = tmp_path / "quick.toml"
    rules.write_text('[[rule]]\nid = "stalled"\nfactor = 1.0\nmin_seconds = 0.5\nquiet_seconds = 0.5\n')
    log = tmp_path / "grpo.log"
    with launched(log, TEE, ranks=1) as (launcher, rank):
        time.sleep(1.0)  # stalled by these rules
        done = rlwatch("check", str(log), "--rules", str(rules), "--json")
        metrics = rlwatch("check", str(log), "--rules", str(rules), "--format", "openmetrics")
    assert done.returncode == 2, done.stderr
    result = json.loads(done.stdout)
    assert [(p["pid"], p["state"], p["wchan"], p["origin"].split(" (pid")[0]) for p in result["processes"]] == [
        (rank, "S", "hrtimer_nanosleep", "writes the log through tee"),
        (launcher, "S", "hrtimer_nanosleep", "writes the log through tee")]
    (family,) = [f for f in text_string_to_metric_families(metrics.stdout) if f.name == "rlwatch_run_process_state"]
    assert sorted((int(s.labels["pid"]), s.labels["state"]) for s in family.samples) == sorted(
        [(rank, "S"), (launcher, "S")])


async def test_a_log_nobody_writes_is_read_once_without_waiting_for_a_second_reading(tmp_path: Path):
    """The second reading is for the CPU share of the processes found; with none found there
    is nothing to read again, and a `check` of a dead run's log waited a second for it."""
    log = tmp_path / "run.log"
    log.write_text("step:1 - train/loss:0.5\n")
    with tail_f(log):  # a reader only
        for host in (this_host(), BY_SCRIPT):  # one reading: no second one, so no pause before it
            scan, answers = await read_log_writers(host, str(log), 1.0)
            assert (scan.writers, len(answers)) == ({}, 1), host.name
