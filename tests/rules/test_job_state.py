"""The scheduler's word on a job (Ray's Jobs API, Slurm) in the verdict: a failed or stopped
job is a crashed run whatever the log says; a succeeded one is finished unless the log shows
a crash (a job script's exit status is its last command's); a queued one is pending, never
stalled."""

from __future__ import annotations

import asyncio

from tests.rules.test_crash import STEPS, TRACEBACK
from tui.model.run_model import RunModel
from tui.session.feed import Feed
from tui.sources.local_file import LocalFile
from tui.parsers.records import JobOutcome, JobRecord, StepRecord
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import load_rules
from tui.rules.run_state import RunState, run_state
from tests.rules.test_stalled import run_of


def job(outcome: JobOutcome, state: str, message: str = "") -> JobRecord:
    return JobRecord("Slurm", "812", state, outcome, message)


def verdict(model: RunModel, now: float = 1000.0) -> tuple[RunState, list]:
    findings = RuleEngine(load_rules()).evaluate(model, now)
    return run_state(model, findings), findings


def test_a_timed_out_job_is_crashed_with_the_schedulers_words():
    model = run_of(2.0, 1000.0)
    model.apply([job(JobOutcome.FAILED, "TIMEOUT", "DUE TO TIME LIMIT")], now=1000.0)
    state, findings = verdict(model)
    assert state == RunState.CRASHED
    (finding,) = [f for f in findings if f.rule == "job-failed"]
    assert finding.severity == "critical"
    assert finding.exception == "Slurm job 812 TIMEOUT: DUE TO TIME LIMIT"
    assert "after step 10" in finding.message


def test_a_succeeded_job_is_finished():
    model = run_of(2.0, 1000.0)
    model.apply([job(JobOutcome.SUCCEEDED, "COMPLETED")], now=1000.0)
    assert verdict(model)[0] == RunState.FINISHED


def test_a_crash_in_the_log_outweighs_a_job_script_that_exited_0(tmp_path):
    # `python train.py; echo done` exits 0 after a crash: Slurm says COMPLETED.
    log = tmp_path / "slurm-812.out"
    log.write_bytes(STEPS + TRACEBACK)
    model = RunModel()
    asyncio.run(Feed(LocalFile(log), model).run(follow=False))
    model.apply([job(JobOutcome.SUCCEEDED, "COMPLETED")], now=1000.0)
    assert verdict(model)[0] == RunState.CRASHED


def test_a_pending_job_is_pending_and_never_stalled():
    model = run_of(2.0, 0.0)
    model.apply([job(JobOutcome.PENDING, "PENDING", "Priority")], now=0.0)
    state, findings = verdict(model, now=100_000.0)
    assert state == RunState.PENDING
    assert not [f for f in findings if f.rule in ("stalled", "job-failed")]


def test_an_ended_job_is_not_called_stalled():
    model = run_of(2.0, 0.0)
    model.apply([job(JobOutcome.STOPPED, "CANCELLED", "by 1000")], now=0.0)
    state, findings = verdict(model, now=100_000.0)
    assert state == RunState.CRASHED
    assert not [f for f in findings if f.rule == "stalled"]


def test_a_running_job_changes_nothing():
    model = RunModel()
    model.apply([StepRecord(1, {"critic/score/mean": 0.5}, 0, 10)], now=0.0)
    model.apply([job(JobOutcome.RUNNING, "RUNNING")], now=0.0)
    assert verdict(model, now=1.0)[0] == RunState.RUNNING
