"""``rlwatch check ray+http://HOST:PORT/JOB --json`` against a real Ray head: the job's
state and its last step from the driver log, Ray's own word on a failed or stopped job,
and one clear line for a job that is not there or a token that is missing."""

from __future__ import annotations

import json

from tests.support import rlwatch
from tui.session.run_session import RunSession
from tui.sources.ray.address import parse_ray_target
from tui.sources.ray.ray_job import RayJobLog


def checked(ray_head, job: str, env: dict | None = None):
    done = rlwatch("check", ray_head.target(job), "--json", env=env or ray_head.env)
    return done, (json.loads(done.stdout) if done.stdout else None)


def findings(result: dict, rule: str) -> list[dict]:
    return [finding for finding in result["findings"] if finding["rule"] == rule]


def test_a_succeeded_job_is_finished_with_all_its_steps(ray_head, ray_jobs):
    done, result = checked(ray_head, ray_jobs["ok"])
    # The real run's clip fraction is low from its first judged step: a note of the run (exit
    # 0), and nothing from Ray.
    assert done.returncode == 0, done.stderr
    assert [(f["rule"], f["severity"]) for f in result["findings"]] == [("clipfrac", "note")]
    assert result["run"]["state"] == "finished"
    assert (result["run"]["last_step"], result["run"]["total_steps"]) == (8, 8)
    assert "Ray 2." in done.stderr and "rlw-ok (SUCCEEDED)" in done.stderr


def test_a_failed_job_is_critical_with_rays_message(ray_head, ray_jobs):
    done, result = checked(ray_head, ray_jobs["crashed"])
    assert done.returncode == 2, done.stderr
    assert result["run"]["state"] == "crashed"
    assert result["run"]["last_step"] == 3
    (failed,) = findings(result, "job-failed")
    assert failed["severity"] == "critical"
    assert failed["exception"] == ("Ray job rlw-crashed FAILED: Job entrypoint command failed with exit code 1: "
                                   "RuntimeError: CUDA error: an illegal memory access was encountered")
    # The driver log itself shows the traceback: the crash rule reads it from the spool.
    (crash,) = findings(result, "crash")
    assert "illegal memory access" in crash["exception"]


def test_a_stopped_job_is_crashed_after_its_last_step(ray_head, ray_jobs):
    done, result = checked(ray_head, ray_jobs["stopped"])
    assert done.returncode == 2
    assert (result["run"]["state"], result["run"]["last_step"]) == ("crashed", 2)
    (stopped,) = findings(result, "job-failed")
    assert stopped["exception"] == "Ray job rlw-stopped STOPPED: Job was intentionally stopped"


def test_without_a_job_and_none_running_the_jobs_are_listed(ray_head, ray_jobs):
    done, _ = checked(ray_head, "")
    assert done.returncode == 3
    (line,) = done.stderr.splitlines()
    assert "no running job to watch" in line
    assert "rlw-crashed (FAILED," in line and "rlw-ok (SUCCEEDED," in line and "Traceback" not in line


def test_an_unknown_job_is_one_line_naming_the_jobs_there(ray_head, ray_jobs):
    done, _ = checked(ray_head, "rlw-nonesuch")
    assert done.returncode == 3
    (line,) = done.stderr.splitlines()
    assert "no job rlw-nonesuch; its jobs: " in line and "rlw-stopped (STOPPED," in line


def test_ray_colon_reads_the_dashboard_ray_api_server_address_names(ray_head, ray_jobs):
    done = rlwatch("check", f"ray:{ray_jobs['ok']}", "--json", env=ray_head.env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["run"]["last_step"] == 8


def test_a_cluster_with_tokens_and_no_token_here_says_what_to_set(ray_head, ray_jobs):
    env = {key: value for key, value in ray_head.env.items() if not key.startswith("RAY_AUTH")}
    done, _ = checked(ray_head, ray_jobs["ok"], env=env)
    assert done.returncode == 3
    (line,) = done.stderr.splitlines()
    assert "wants Ray's authentication token" in line and "RAY_AUTH_TOKEN" in line


def test_a_port_without_a_dashboard_is_one_line(ray_head):
    from tests.sshd import free_port

    done = rlwatch("check", f"ray+http://127.0.0.1:{free_port()}/x", env=ray_head.env)
    assert done.returncode == 3
    (line,) = done.stderr.splitlines()
    assert "cannot connect" in line and "Ray's dashboard" in line


def test_a_web_server_that_is_not_rays_dashboard_is_one_line(tmp_path):
    import subprocess
    import sys

    from tests.sshd import _wait_for_port, free_port

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port, server)
        done = rlwatch("check", f"ray+http://127.0.0.1:{port}/raysubmit_1")
    finally:
        server.terminate()
        server.wait()
    assert done.returncode == 3
    (line,) = done.stderr.splitlines()
    assert line == f"rlwatch: http://127.0.0.1:{port}: no /api/version there: not a Ray dashboard"


def test_an_entrypoint_with_escape_sequences_is_listed_inert(ray_head, ray_jobs):
    done = ray_head.ray("job", "submit", "--no-wait", "--submission-id", "rlw-hostile", "--",
                        "true", "\x1b]0;owned\x07\x1b[2J")
    assert done.returncode == 0, done.stderr
    done, _ = checked(ray_head, "rlw-nonesuch")
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "rlw-hostile (" in done.stderr and "␛]0;owned␇␛[2J" in done.stderr


def test_the_heads_accelerators_are_the_jobs(ray_head, ray_jobs, tmp_path):
    """The head runs the driver (on one node, the whole job): a dashboard on loopback reads
    this machine's GPUs, here a replayed H100 nvidia-smi first on PATH."""
    from tests.sources.accelerators.conftest import H100_REAL
    from tests.sources.accelerators.replay import install

    install(tmp_path / "bin", "nvidia-smi", H100_REAL)
    env = dict(ray_head.env, PATH=f"{tmp_path / 'bin'}:{ray_head.env.get('PATH', '')}")
    done, result = checked(ray_head, ray_jobs["ok"], env)
    assert done.returncode == 0, done.stderr
    (gpu,) = result["accelerators"]
    assert "H100" in gpu["name"] and gpu["util_pct"] == 100


async def test_a_check_downloads_an_ended_jobs_log_once(ray_head, ray_jobs, monkeypatch):
    """Ray serves a driver log only whole: reading the run once (its config head and sample
    windows reach past a small log's end) fetches it once, not once more per such read."""
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"):
        monkeypatch.setenv(name, ray_head.env[name])
    source = RayJobLog(parse_ray_target(ray_head.target(ray_jobs["ok"])))
    session = RunSession(source, watch_accelerators=False)
    fetched: list[str] = []
    await session.connect()
    try:
        whole = source.api.logs

        async def counted(submission_id: str) -> str:
            fetched.append(submission_id)
            return await whole(submission_id)

        monkeypatch.setattr(source.api, "logs", counted)
        await session.load()
        assert session.model.last_step == 8
        assert b"step:8 - " in await source.read_range(0, 1 << 30)
    finally:
        await session.close()
    assert len(fetched) == 1
