"""A stuck run's processes, read for real: a trainer that sleeps and one stopped with SIGSTOP,
each a real Python process that wrote its own log (with Ray's ``(TaskRunner pid=N)`` prefix),
read by the session from this machine's /proc and said by the stalled finding."""

from __future__ import annotations

import asyncio
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

from tests.support import rlwatch, until
from tui.model.accelerators import AcceleratorHistory
from tui.model.processes import LOG_ORIGIN, Watched
from tui.model.run_model import RunModel
from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample
from tui.rules.findings import Finding
from tui.rules.rule_file import RuleSpec, load_rules
from tui.session import run_session
from tui.session.run_session import RunChanged
from tui.session.run_session import RunSession
from tui.session.process_reads import log_host, reachable_processes
from tui.sources.accelerators.hosts import AcceleratorHost
from tui.sources.accelerators.runner import LocalRunner
from tui.sources.local_file import LocalFile
from tui.sources.slurm.job_log import SlurmJobLog
from tui.sources.slurm.target import parse_slurm_target

# A run of 3 steps of 0.1 s, then what its second argument says (a traceback), then a hang (a
# sleep); it says "hung" once its log is written.
TRAINER = """
import os, sys, time
prefix = f"(TaskRunner pid={os.getpid()})"
with open(sys.argv[1], "w") as log:
    for step in range(1, 4):
        time.sleep(0.1)
        print(prefix, f"step:{step} - train/loss:{1 / step:.4f} - timing_s/step:0.1000", file=log, flush=True)
    print(sys.argv[2], end="", file=log, flush=True)
print("hung", flush=True)
time.sleep(600)
"""
AN_HOUR = 3600.0


@contextmanager
def hung_trainer(log: Path, stopped: bool = False, then: str = "") -> Iterator[subprocess.Popen[bytes]]:
    """A real trainer hanging after step 3 (``stopped``: stopped with SIGSTOP there), having
    printed ``then`` after it."""
    process = subprocess.Popen([sys.executable, "-c", TRAINER, str(log), then], stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None and process.stdout.readline() == b"hung\n"
        if stopped:
            os.kill(process.pid, signal.SIGSTOP)
        else:  # asleep once its last print is done
            while Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "S":
                time.sleep(0.01)
        yield process
    finally:
        process.kill()
        process.wait()


def quick_stall_rules() -> list[RuleSpec]:
    """The default rules, a run stalled half a second after its last step."""
    rules = load_rules()
    for rule in rules:
        if rule.id == "stalled":
            rule.params.update(factor=1.0, min_seconds=0.5, quiet_seconds=0.5)
    return rules


async def stalled_after_reading(session: RunSession) -> Finding:
    """``session`` loaded, judged an hour on (stalled), its processes read, judged again."""
    await session.load()
    later = time.time() + AN_HOUR
    assert [f.rule for f in session.judge(later)] == ["stalled"]
    assert await session.read_stuck_processes(pause_s=0.5)
    (finding,) = session.judge(later)
    return finding


async def test_a_stopped_trainer_is_said_stopped_by_the_pid_its_log_names(tmp_path: Path):
    log = tmp_path / "run.log"
    with hung_trainer(log, stopped=True) as trainer:
        comm = Path(f"/proc/{trainer.pid}/comm").read_text().strip()
        session = RunSession(LocalFile(log))
        finding = await stalled_after_reading(session)
    assert session.model.steps_pid == trainer.pid
    assert re.search(rf"processes: pid {trainer.pid} \({comm}\) stopped \(T: SIGSTOP or \^Z\), "
                     r"0 % CPU over 0\.\d+ s, up [^(]+ s \(", finding.message), finding.message
    assert "by the log's process prefix, on " in finding.message
    assert finding.message.endswith("(kill -CONT), and the run waits on it")


async def test_a_sleeping_trainer_is_said_asleep_with_its_wait_and_a_gone_one_gone(tmp_path: Path):
    log = tmp_path / "run.log"
    with hung_trainer(log) as trainer:
        session = RunSession(LocalFile(log))
        finding = await stalled_after_reading(session)
        assert f"pid {trainer.pid} " in finding.message
        assert "asleep (S, waiting in hrtimer_nanosleep: a timer: a sleep or a back-off), 0 % CPU over" in finding.message
    assert await session.read_stuck_processes(pause_s=0.1)  # the process killed since
    (finding,) = session.judge(time.time() + AN_HOUR)
    assert f"pid {trainer.pid} gone: no such process on " in finding.message
    assert finding.message.endswith("the run's processes have ended")


async def test_a_run_that_is_not_stuck_has_its_processes_left_alone(tmp_path: Path):
    log = tmp_path / "run.log"
    with hung_trainer(log):
        session = RunSession(LocalFile(log))
        await session.load()
        assert session.judge() == []
        assert not await session.read_stuck_processes(pause_s=0.1)
        assert session.model.processes.latest(0.0) == []



async def test_a_followed_run_has_its_processes_read_while_stuck_and_judged_with_them(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(run_session, "PROCESS_READ_S", 0.2)
    log = tmp_path / "run.log"
    with hung_trainer(log, stopped=True) as trainer:
        session = RunSession(LocalFile(log, poll_seconds=0.05), rules=quick_stall_rules())
        changes: list[RunChanged] = []
        session.listen(changes.append)
        following = asyncio.create_task(session.follow())
        try:
            await until(lambda: session.model.last_step == 3, what="the steps")
            assert session.model.processes.latest(0.0) == []  # not stuck yet: not read
            await asyncio.sleep(0.6)
            session.judge()  # stalled now, as the viewer's next judgement finds it
            await until(lambda: len(session.model.processes.latest(0.0)) == 1, what="a reading")
            await until(lambda: "% CPU over" in session.judge()[0].message, what="a second reading")
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            await session.close()
    assert f"pid {trainer.pid} (python) stopped (T: SIGSTOP or ^Z)" in session.findings[0].message
    assert any(change.model for change in changes[-3:])


def test_a_slurm_logs_pid_is_not_looked_for_on_the_login_node_but_a_nodes_device_holders_are():
    """The login node is only the way in: the pid its log names lives on a compute node."""
    target = parse_slurm_target("slurm://login/12345")
    assert target is not None
    assert log_host(SlurmJobLog(target)) is None
    assert log_host(LocalFile(Path("run.log"))) is not None
    model = RunModel()
    model.steps_pid = 4242
    history = AcceleratorHistory()
    history.add([AcceleratorSample("node07", 0, None, "H200", 100.0, 1.0, 2.0, 30.0, 168.0,
                                   (AcceleratorProcess(781, "python", 1654.0),))], 1.0)
    node07 = AcceleratorHost(LocalRunner(), "node07", False)
    watched, reachable = reachable_processes(model, history, None, {"node07": node07})
    assert watched == [Watched("node07", 781, "holds device 0", True)] and reachable == {"node07": node07}
    assert reachable_processes(model, history, None, {}) == ([], {})


def test_check_says_what_the_stopped_trainer_does_in_text_and_json(tmp_path: Path):
    rules = tmp_path / "quick.toml"
    rules.write_text('[[rule]]\nid = "stalled"\nfactor = 1.0\nmin_seconds = 0.5\nquiet_seconds = 0.5\n')
    log = tmp_path / "run.log"
    with hung_trainer(log, stopped=True) as trainer:
        time.sleep(1.0)  # half a second past its last step: stalled by these rules
        text = rlwatch("check", str(log), "--rules", str(rules))
        done = rlwatch("check", str(log), "--rules", str(rules), "--json")
        metrics = rlwatch("check", str(log), "--rules", str(rules), "--format", "openmetrics")
    assert text.returncode == 2 and f"pid {trainer.pid} (python) stopped (T: SIGSTOP or ^Z), 0 % CPU over 1 s" in text.stdout
    result = json.loads(done.stdout)
    (finding,) = result["findings"]
    assert f"processes: pid {trainer.pid} (python) stopped (T: SIGSTOP or ^Z)" in finding["message"]
    # the same reading as fields a script can test, without parsing the message
    (process,) = result["processes"]
    assert {key: process[key] for key in ("pid", "comm", "state", "wchan", "cpu_pct", "on_device")} == {
        "pid": trainer.pid, "comm": "python", "state": "T", "wchan": "do_signal_stop", "cpu_pct": 0.0,
        "on_device": False}
    assert process["origin"] == LOG_ORIGIN and process["host"] and process["words"] in finding["message"]
    assert 0.5 <= process["over_s"] <= 5 and 0.5 <= process["age_s"] <= 60
    # and for Prometheus: the stopped trainer by pid and state
    (family,) = [f for f in text_string_to_metric_families(metrics.stdout) if f.name == "rlwatch_run_process_state"]
    assert [(s.labels["pid"], s.labels["state"], s.value) for s in family.samples] == [(str(trainer.pid), "T", 1.0)]


def test_check_json_has_no_processes_where_none_were_read(tmp_path: Path):
    """A run that does not look stuck has its processes left alone: no field for them."""
    log = tmp_path / "run.log"
    with hung_trainer(log):
        done = rlwatch("check", str(log), "--json")
    assert done.returncode == 0 and "processes" not in json.loads(done.stdout)
