"""``rlwatch status``, ``report`` and ``export`` on a Ray job of the real head: the job's
state counts as it does for ``check`` (a FAILED job is critical with Ray's reason), and a
head that is down or a job that is not there is one line saying so."""

from __future__ import annotations

import json
import subprocess

from tests.sshd import free_port
from tests.support import read_back, rlwatch


def status(ray_head, tmp_path, *targets: str) -> subprocess.CompletedProcess:
    """``rlwatch status`` with a cache of its own under ``tmp_path``, as tmux runs it."""
    env = dict(ray_head.env, XDG_CACHE_HOME=str(tmp_path / "cache"), LANG="C.UTF-8")
    return rlwatch("status", *targets, env=env)


def test_status_of_a_finished_job_names_it_and_its_last_step(ray_head, ray_jobs, tmp_path):
    done = status(ray_head, tmp_path, ray_head.target(ray_jobs["ok"]))
    # The real run's clip fraction is low from its first judged step: a note, as check says.
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("rlw-ok 8/8 reward "), done.stdout
    assert done.stdout.endswith("✓ ok\n") and done.stderr == ""
    again = status(ray_head, tmp_path, ray_head.target(ray_jobs["ok"]))
    assert again.stdout == done.stdout


def test_status_of_a_failed_job_is_critical_with_rays_reason(ray_head, ray_jobs, tmp_path):
    done = status(ray_head, tmp_path, ray_head.target(ray_jobs["crashed"]))
    assert done.returncode == 2, done.stdout
    (line,) = done.stdout.splitlines()
    assert line.startswith("rlw-crashed 3/8 reward "), line
    # Ray's word first, then the log's own crash (+1).
    assert line.endswith("✖ CRIT job-failed: Ray job rlw-crashed FAILED: Job entrypoint comm… +1")


def test_status_of_a_stopped_job_is_critical(ray_head, ray_jobs, tmp_path):
    done = status(ray_head, tmp_path, ray_head.target(ray_jobs["stopped"]))
    assert done.returncode == 2, done.stdout
    assert "✖ CRIT job-failed" in done.stdout


def test_status_of_jobs_as_a_fleet_gives_the_worst(ray_head, ray_jobs, tmp_path):
    done = status(ray_head, tmp_path, ray_head.target(ray_jobs["ok"]), ray_head.target(ray_jobs["crashed"]))
    assert done.returncode == 2, done.stdout
    assert len(done.stdout.splitlines()) == 1


def test_status_of_a_head_that_is_down_or_a_job_that_is_not_there_is_one_line(ray_head, ray_jobs, tmp_path):
    down = status(ray_head, tmp_path, f"ray+http://127.0.0.1:{free_port()}/rlw-ok")
    assert down.returncode == 3
    (line,) = down.stdout.splitlines()
    assert line.startswith("rlwatch: http://127.0.0.1:") and "cannot connect" in line
    missing = status(ray_head, tmp_path, ray_head.target("rlw-nonesuch"))
    assert missing.returncode == 3
    (line,) = missing.stdout.splitlines()
    assert "no job rlw-nonesuch; its jobs: " in line and "rlw-ok (SUCCEEDED," in line


def test_report_of_a_finished_job_is_its_verdict(ray_head, ray_jobs):
    done = rlwatch("report", ray_head.target(ray_jobs["ok"]), "--json", env=ray_head.env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["log"], report["state"], report["finished"]) == (
        f"rlw-ok on {ray_head.url}", "finished", True)
    assert (report["last_step"], report["total_steps"]) == (8, 8)
    assert [finding["rule"] for finding in report["findings"]] == ["clipfrac"]


def test_report_of_a_failed_job_says_it_failed_and_rays_reason(ray_head, ray_jobs):
    done = rlwatch("report", ray_head.target(ray_jobs["crashed"]), "--json", env=ray_head.env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["state"], report["last_step"]) == ("crashed", 3)
    (failed,) = [finding for finding in report["findings"] if finding["rule"] == "job-failed"]
    assert failed["severity"] == "critical"
    assert failed["exception"].startswith("Ray job rlw-crashed FAILED: Job entrypoint command failed")
    text = rlwatch("report", ray_head.target(ray_jobs["crashed"]), env=ray_head.env)
    assert text.returncode == 0 and "Ray job rlw-crashed FAILED" in text.stdout, text.stdout


def test_report_of_a_head_that_is_down_or_a_job_that_is_not_there_is_one_line(ray_head, ray_jobs):
    for target, said in ((f"ray+http://127.0.0.1:{free_port()}/rlw-ok", "cannot connect"),
                         (ray_head.target("rlw-nonesuch"), "no job rlw-nonesuch; its jobs: ")):
        done = rlwatch("report", target, env=ray_head.env)
        assert done.returncode == 3
        (line,) = done.stderr.splitlines()
        assert line.startswith("rlwatch: ") and said in line and done.stdout == ""


def test_export_of_a_job_writes_its_steps(ray_head, ray_jobs, tmp_path):
    done = rlwatch("export", ray_head.target(ray_jobs["crashed"]), "--tensorboard", str(tmp_path / "tb"),
                   env=ray_head.env)
    assert done.returncode == 0, done.stderr
    back = read_back(tmp_path / "tb")
    assert back and all(set(steps) <= {0, 1, 2, 3} for steps in back.values())
    assert any(set(steps) == {1, 2, 3} for steps in back.values())


def test_export_of_a_head_that_is_down_or_a_job_that_is_not_there_is_one_line(ray_head, ray_jobs, tmp_path):
    for target, said in ((f"ray+http://127.0.0.1:{free_port()}/rlw-ok", "cannot connect"),
                         (ray_head.target("rlw-nonesuch"), "no job rlw-nonesuch; its jobs: ")):
        done = rlwatch("export", target, "--tensorboard", str(tmp_path / "tb"), env=ray_head.env)
        assert done.returncode == 3
        (line,) = done.stderr.splitlines()
        assert line.startswith("rlwatch: ") and said in line


async def test_read_once_a_range_past_what_arrived_is_the_logs_as_ray_has_them(ray_head, ray_jobs, monkeypatch):
    """``status`` checks the bytes before where it stopped last time before reading on: a Ray
    source not following fetches the log for them (nothing has arrived yet in a new process)."""
    from tui.sources.ray.address import parse_ray_target
    from tui.sources.ray.ray_job import RayJobLog

    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"):
        monkeypatch.setenv(name, ray_head.env[name])
    logs = ray_head.api(f"/api/jobs/{ray_jobs['ok']}/logs")["logs"].encode()
    source = RayJobLog(parse_ray_target(ray_head.target(ray_jobs["ok"])))
    await source.connect()
    try:
        assert await source.read_range(len(logs) - 64, len(logs)) == logs[-64:]
        assert await source.read_range(0, len(logs) + 100) == logs
    finally:
        await source.close()
