"""``rlwatch check slurm://login/JOBID`` against a real Slurm, through a real sshd: the job's
output file is the log, its state the scheduler's word in the verdict (a failed, cancelled
or timed-out job is a crashed run, the ``job-failed`` finding saying how), and where the
controller has forgotten a job and accounting is off, the message says what is left."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.sources.slurm.conftest import TRACEBACK, prints_steps
from tests.support import rlwatch_as
from tui.sources.slurm.job_log import user_jobs
from tui.sources.slurm.target import parse_slurm_target


def check(world, job_id: str):
    return rlwatch_as(world.home, "check", f"slurm://login/{job_id}", "--json")


def check_text(world, job_id: str) -> str:
    return rlwatch_as(world.home, "check", f"slurm://login/{job_id}").stdout


def printed_steps(output: Path) -> int:
    text = output.read_text() if output.exists() else ""  # slurmd creates it as the job starts
    return sum(line.startswith("step:") for line in text.splitlines())


def job_failed(result: dict) -> dict:
    (finding,) = [f for f in result["findings"] if f["rule"] == "job-failed"]
    return finding


def test_a_completed_job_is_a_finished_run_read_from_its_output_file(slurm_world):
    cluster = slurm_world.cluster
    job = cluster.submit("done", prints_steps(4))
    cluster.wait_for(job, "COMPLETED")
    done = check(slurm_world, job)
    assert done.stdout, done.stderr
    result = json.loads(done.stdout)
    assert result["run"]["state"] == "finished"
    assert result["run"]["last_step"] == 3
    assert result["run"]["log"] == f"login:{cluster.output('done', job)}"
    assert not [f for f in result["findings"] if f["rule"] == "job-failed"]
    assert f"Slurm job {job} on login COMPLETED (ran on localhost)" in done.stderr


def test_a_failed_job_is_crashed_with_slurms_reason_and_exit_code(slurm_world):
    cluster = slurm_world.cluster
    job = cluster.submit("fails", prints_steps(3, f"cat <<'EOF'\n{TRACEBACK}EOF\nexit 1\n"))
    cluster.wait_for(job, "FAILED")
    done = check(slurm_world, job)
    result = json.loads(done.stdout)
    assert done.returncode == 2, done.stderr
    assert result["run"]["state"] == "crashed"
    assert result["run"]["last_step"] == 2
    finding = job_failed(result)
    assert finding["severity"] == "critical"
    assert finding["exception"] == f"Slurm job {job} FAILED: NonZeroExitCode, exit code 1"
    # The scheduler's word, for scripts: its own state, the shared outcome, where it ran.
    assert result["job"] == {"scheduler": "Slurm", "id": job, "state": "FAILED",
                             "outcome": "failed", "message": "NonZeroExitCode, exit code 1",
                             "nodes": ["localhost"], "time_limit_s": None, "note": "scontrol"}
    text = check_text(slurm_world, job)
    assert f"Slurm job {job}: FAILED (NonZeroExitCode, exit code 1)" in text


def test_a_cancelled_job_is_crashed_and_says_it_was_cancelled(slurm_world):
    cluster = slurm_world.cluster
    job = cluster.submit("cancelled", prints_steps(3, "sleep 600\n"))
    cluster.wait_for(job, "RUNNING")
    cluster.wait_until(lambda: printed_steps(cluster.output("cancelled", job)) == 3,
                       "the job's step lines")
    running = json.loads(check(slurm_world, job).stdout)
    assert running["run"]["state"] not in ("crashed", "finished")
    assert not [f for f in running["findings"] if f["rule"] == "job-failed"]
    cluster.run("scancel", job)
    cluster.wait_for(job, "CANCELLED")
    result = json.loads(check(slurm_world, job).stdout)
    assert result["run"]["state"] == "crashed"
    assert result["run"]["last_step"] == 2
    assert job_failed(result)["exception"].startswith(f"Slurm job {job} CANCELLED")


def test_a_queued_job_is_pending_not_unreadable(slurm_world):
    cluster = slurm_world.cluster
    job = cluster.submit("held", prints_steps(1), "--hold")
    try:
        done = check(slurm_world, job)
        result = json.loads(done.stdout)
        assert done.returncode == 0, done.stderr
        assert (result["run"]["state"], result["run"]["steps"]) == ("pending", 0)
        assert f"Slurm job {job} on login is PENDING (JobHeldUser)" in done.stderr
    finally:
        cluster.run("scancel", job)


def test_a_job_slurm_no_longer_knows_without_accounting_names_what_is_left(slurm_world):
    # The controller forgets a job MinJobAge after it ends; an id it never had reads the same.
    done = check(slurm_world, "999999")
    assert done.returncode == 3
    assert done.stdout == ""
    message = done.stderr.strip()
    assert "the controller does not know it" in message
    assert "accounting is off there (sacct: Slurm accounting storage is disabled)" in message
    assert "slurm-999999.out" in message
    assert "Traceback" not in message


def test_the_login_node_alone_lists_the_users_jobs(slurm_world, monkeypatch):
    cluster = slurm_world.cluster
    job = cluster.submit("listed", prints_steps(1, "sleep 600\n"))
    try:
        cluster.wait_for(job, "RUNNING")
        # What a fleet view asks for: the jobs, each to open as slurm://login/JOBID.
        monkeypatch.setenv("HOME", str(slurm_world.home.path))
        monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
        jobs = asyncio.run(user_jobs(parse_slurm_target("slurm://login")))
        (listed,) = [j for j in jobs if j.record.job_id == job]
        assert (listed.name, listed.record.state, listed.record.nodes) == ("listed", "RUNNING",
                                                                           ("localhost",))
        # A job's name is its user's text: shown, never obeyed by the terminal.
        cluster.run("scontrol", "update", f"JobId={job}", "JobName=listed\x1b]0;pwned\x07")
        done = rlwatch_as(slurm_world.home, "check", "slurm://login")
        assert done.returncode == 3
        assert f"slurm://login/{job}  RUNNING on localhost  listed␛]0;pwned␇" in done.stderr
        assert "\x1b" not in done.stderr
    finally:
        cluster.run("scancel", job)


def test_a_job_id_that_is_not_one_is_refused_before_connecting(slurm_world):
    done = rlwatch_as(slurm_world.home, "check", "slurm://login/12;reboot")
    assert done.returncode == 3
    assert "is not a Slurm job id" in done.stderr
