"""A stalled run whose log names no pid, read over the real test sshd by who writes its log
(the box is this machine, so the trainer started here is the box's): found and read in one
round trip, with a log path that tries to be a command; and the gloo hang under torchrun on
CPU that ``tests/fixtures/logs/generated/ddp`` recorded, live, where a Python with torch is
at hand (this venv's, or the one ``RLWATCH_TEST_TORCH_PYTHON`` names)."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.session.test_log_writers import TEE, launched, state
from tests.session.test_process_states import AN_HOUR
from tests.sources.ssh.test_remote_process_states import counted
from tests.support import NEEDLES
from tui.session.run_session import RunSession
from tui.sources.base import LogSource
from tui.sources.local_file import LocalFile
from tui.sources.log_writers import read_log_writers
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget

DDP_FAIL = Path(__file__).parents[2] / "fixtures/logs/generated/ddp/make/ddp_fail.py"


async def read_when_stalled(source: LogSource, monkeypatch) -> tuple[RunSession, str, list[str]]:
    """``source``'s run loaded and judged an hour on, its processes read as ``check`` reads a
    stuck run's: the session, its stalled finding's words, and the commands that read cost."""
    commands = counted(monkeypatch)
    session = RunSession(source)
    later = time.time() + AN_HOUR
    try:
        await session.connect()
        await session.load()
        session.judge(later)
        loaded = len(commands)
        assert await session.read_stuck_processes(pause_s=0.5)
        said = next(finding.message for finding in session.judge(later) if finding.rule == "stalled")
    finally:
        await session.close()
    return session, said, commands[loaded:]


async def test_a_tee_run_on_the_box_is_found_and_read_in_one_round_trip(client_home, tmp_path, monkeypatch):
    log = tmp_path / "grpo.log"
    with launched(log, TEE) as (launcher, *ranks):
        _, message, commands = await read_when_stalled(RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES), monkeypatch)
    assert len(commands) == 1 and "sh 0.5 " in commands[0]
    said = re.findall(r"pid (\d+) \([^)]*\) asleep \(S, waiting in hrtimer_nanosleep[^)]*\), 0 % CPU over 0\.\d+ s, "
                      r"up [^(]+ \(writes the log through tee \(pid \d+\), on gpu\)", message)
    assert [int(pid) for pid in said] == [*ranks, launcher], message


async def test_a_log_path_that_tries_to_be_a_command_finds_its_writer_on_the_box(client_home, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = shlex.quote(str(outside / "PWNED"))
    folder = tmp_path / f"-e $(touch {marker}) `touch {marker}`"
    folder.mkdir(parents=True)
    log = folder / "-n a b\nc; touch PWNED (deleted)"
    (tmp_path / "run.log").write_text("")
    source = RemoteLog(RemoteTarget("gpu", str(tmp_path / "run.log")), NEEDLES)
    with launched(log, TEE, ranks=0) as (launcher,):
        await source.connect()
        try:
            scan, answers = await read_log_writers(source.accelerator_host(), str(log), 0)
        finally:
            await source.close()
    (tee,) = scan.writers
    assert scan.feeds == {tee: frozenset({launcher})} and answers[0].stats[launcher] is not None
    assert list(outside.iterdir()) == []
    assert not list(tmp_path.rglob("PWNED"))


def torch_python() -> str | None:
    """A Python with torch: this one, or ``RLWATCH_TEST_TORCH_PYTHON``'s."""
    if importlib.util.find_spec("torch") is not None:
        return sys.executable
    return os.environ.get("RLWATCH_TEST_TORCH_PYTHON") or None


async def test_the_gloo_hang_under_torchrun_is_read_by_its_ranks_here_and_on_the_box(client_home, tmp_path,
                                                                                    monkeypatch):
    python = torch_python()
    if python is None:
        pytest.skip("no Python with torch here (set RLWATCH_TEST_TORCH_PYTHON to one)")
    log = tmp_path / "gloo.log"
    env = {**os.environ, "BACKEND": "gloo", "OMP_NUM_THREADS": "1", "FAIL": "hang", "FAIL_RANK": "1",
           "FAIL_AT": "5", "PG_TIMEOUT_S": "120"}
    shell = subprocess.Popen(["sh", "-c", '"$0" -m torch.distributed.run --nproc_per_node 2 "$1" 2>&1 | tee -- "$2"',
                              python, str(DDP_FAIL), str(log)], env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while not log.exists() or b"\nstep:4 " not in log.read_bytes():
            assert time.monotonic() < deadline and shell.poll() is None, "torchrun did not reach step 4"
            time.sleep(0.2)
        agent = int(subprocess.run(["pgrep", "-s", str(shell.pid), "pt_elastic"], capture_output=True,
                                   text=True).stdout.split()[0])
        ranks = sorted(int(pid) for pid in subprocess.run(["pgrep", "-P", str(agent)], capture_output=True,
                                                          text=True).stdout.split())
        while any(state(pid) != "S" for pid in ranks):  # rank 0 into the all-reduce, rank 1 asleep
            assert time.monotonic() < deadline
            time.sleep(0.2)
        findings = []
        for source in (LocalFile(log), RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES)):
            session, said, _ = await read_when_stalled(source, monkeypatch)
            writers = session.model.processes.writers
            assert writers is not None and [one.pid for one in writers.found][:3] == [*ranks, agent]
            findings.append(said)
    finally:
        os.killpg(shell.pid, signal.SIGTERM)
        shell.wait()
    for said in findings:
        assert re.search(rf"pid {ranks[0]} \([^)]*\) asleep \(S, waiting in futex", said), said
        assert re.search(rf"pid {ranks[1]} \([^)]*\) asleep \(S, waiting in hrtimer_nanosleep", said), said
        assert f"pid {agent} (pt_elastic) asleep" in said
