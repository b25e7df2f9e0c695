"""``rlwatch watch slurm://login/JOBID --headless --json`` on a real Slurm job, through a real
sshd: the job runs, then fails with a traceback, and the watcher tells the crash (the
traceback's exception line) and Slurm's word on the job, each once, and nothing again when
it is restarted."""

from __future__ import annotations

from tests.cli.test_watch import QUIET_S, watching
from tests.sources.slurm.conftest import TRACEBACK, prints_steps

# Slurm's state is asked every 15 s while a job runs; the watcher judges every 5 s.
TOLD_S = 60.0


def test_a_job_that_fails_while_watched_is_told_once(slurm_world, tmp_path):
    cluster = slurm_world.cluster
    job = cluster.submit("watched", prints_steps(3, f"sleep 4\ncat <<'EOF'\n{TRACEBACK}EOF\nexit 1\n"))
    target = f"slurm://login/{job}"
    with watching(tmp_path, target, env=slurm_world.home.env()) as watcher:
        told = {event["rule"]: event for event in (watcher.next(TOLD_S), watcher.next(TOLD_S))}
        assert sorted(told) == ["crash", "job-failed"]
        assert all(event["kind"] == "critical" and event["host"] == "login" and event["step"] == 2
                   for event in told.values())
        assert told["crash"]["exception"] == "RuntimeError: CUDA error: an illegal memory access was encountered"
        assert told["job-failed"]["exception"] == f"Slurm job {job} FAILED: NonZeroExitCode, exit code 1"
        assert watcher.none_within(QUIET_S)
        assert watcher.stop() == 0
    with watching(tmp_path, target, env=slurm_world.home.env()) as again:
        assert again.none_within(QUIET_S)
        assert again.stop() == 0
