"""``rlwatch watch ray+http://HOST:PORT/JOB… --headless --json`` on a real Ray head: a job that
raises while it is watched is told as a crash (its exception line) and as Ray's word on the
job, one that had finished as finished with its verdict; each once. Ray's log stream sends what
it has at most once a second: a loaded head can send a traceback's first line seconds before the
rest, and the crash is then told without its exception line, and again once it is read."""

from __future__ import annotations

from tests.cli.test_watch import QUIET_S, watching

TOLD_S = 60.0


def test_a_job_that_raises_while_watched_and_one_that_finished_are_told_once(ray_head, ray_jobs, tmp_path):
    live = ray_head.submit("rlw-watched", 3, "raise", delay=0.3)
    with watching(tmp_path, ray_head.target(live), ray_head.target(ray_jobs["ok"]), env=ray_head.env) as watcher:
        told = [watcher.next(TOLD_S) for _ in range(3)]
        if any(event.get("rule") == "crash" and event["exception"].startswith("Traceback") for event in told):
            told.append(watcher.next(TOLD_S))  # the same crash, explained
        assert watcher.none_within(QUIET_S)
        assert watcher.stop() == 0
    kinds = sorted((event["kind"], event.get("rule", "")) for event in told if event["kind"] != "explained")
    assert kinds == [("critical", "crash"), ("critical", "job-failed"), ("finished", "")], told
    *_, crash = [event for event in told if event.get("rule") == "crash"]  # the explained one if told
    (failed,) = [event for event in told if event.get("rule") == "job-failed"]
    (finished,) = [event for event in told if event["kind"] == "finished"]
    assert crash["run"] == failed["run"] != finished["run"]
    assert crash["exception"] == "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert crash["step"] == failed["step"] == 3
    assert failed["exception"] == ("Ray job rlw-watched FAILED: Job entrypoint command failed with exit code 1: "
                                   "RuntimeError: CUDA error: an illegal memory access was encountered")
    assert (finished["step"], finished["total"]) == (8, 8)
    assert finished["what"].startswith("finished at step 8/8")
