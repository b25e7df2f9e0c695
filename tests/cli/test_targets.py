"""What a target may be: a log, a run directory, and runs with no console log at all.

A directory of TensorBoard event files (verl with ``trainer.logger=['tensorboard']``)
and a bare file-logger JSONL (``['file']``) are runs for every command:
``check`` (same JSON contract, ``run.log`` naming what was read), ``report``,
``status`` and ``export``; the real command line on real files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import (
    GENERATED,
    JSONL_V06,
    JSONL_V071,
    dumps,
    exact_steps,
    hydra_leftovers,
    rlwatch,
    same,
    tensorboard_only,
    without_console,
)
from tui.cli.targets import open_target, pooled_target, target_host
from tui.sources.local_file import LocalFile
from tui.sources.logger_run import LocalLoggerRun

RLWATCH = Path(sys.executable).parent / "rlwatch"


def check(*args: str) -> tuple[dict, subprocess.CompletedProcess]:
    done = rlwatch("check", *args, "--json")
    return json.loads(done.stdout), done


def test_a_tensorboard_only_directory_is_checked_from_its_newest_experiment(tmp_path):
    run = tensorboard_only(tmp_path)
    result, done = check(str(run))
    assert done.returncode == 2, done.stderr  # the fixture's inf grad norm: critical
    assert set(result) == {"target", "run", "latest", "findings", "accelerators", "job"}
    experiment = run / "tensorboard_log" / "proj" / "exp"
    assert result["target"] == str(run) and result["run"]["log"] == str(experiment)
    assert result["run"]["steps"] == 7 and result["run"]["last_step"] == 6
    assert result["run"]["total_steps"] is None
    assert "loss-nan" in {f["rule"] for f in result["findings"]}
    assert f"reading TensorBoard event files {experiment}" in done.stderr
    assert "newest of 2 experiment(s) found; --log names another" in done.stderr


def test_log_picks_another_experiment(tmp_path):
    run = tensorboard_only(tmp_path)
    result, done = check(str(run), "--log", "tensorboard_log/proj/older")
    assert result["run"]["log"] == str(run / "tensorboard_log" / "proj" / "older")
    assert result["run"]["last_step"] == 2 and result["latest"]["critic/score/mean"] == 0.20000000298023224  # float32


def test_a_bare_jsonl_and_a_directory_holding_it_give_its_exact_values(tmp_path):
    last = exact_steps()[-1]
    folder = tmp_path / "proj"
    folder.mkdir()
    shutil.copy(JSONL_V06, folder / "exp.jsonl")
    dumps(folder / "rollouts")  # JSONLs of another schema beside it are not the run
    for target in (folder / "exp.jsonl", folder):
        result, done = check(str(target))
        assert result["run"]["log"] == str(folder / "exp.jsonl"), done.stderr
        assert result["run"]["steps"] == 5 and result["run"]["last_step"] == 4
        assert result["latest"]["actor/pg_loss"] == last.metrics["actor/pg_loss"]  # exact
        assert all(same(result["latest"][key], value) for key, value in last.metrics.items())


def test_a_stale_jsonl_is_stalled_by_its_modification_time(tmp_path):
    """The fixture's steps take ~4,800 s; a file last written two days ago is stalled."""
    jsonl = tmp_path / "exp.jsonl"
    shutil.copy(JSONL_V071, jsonl)
    result, _ = check(str(jsonl))
    assert "stalled" not in {f["rule"] for f in result["findings"]}
    two_days_ago = time.time() - 2 * 86400
    os.utime(jsonl, (two_days_ago, two_days_ago))
    result, _ = check(str(jsonl))
    assert "stalled" in {f["rule"] for f in result["findings"]}


def test_what_is_not_a_run_is_refused_in_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    done = rlwatch("check", str(tmp_path / "empty"))
    assert done.returncode == 3 and done.stdout == ""
    assert "not a training log" in done.stderr and "TensorBoard event files" in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    dumps(tmp_path / "only_dumps")
    done = rlwatch("check", str(tmp_path / "only_dumps"))
    assert done.returncode == 3 and "not a training log" in done.stderr
    done = rlwatch("check", str(tmp_path / "only_dumps" / "1.jsonl"))  # read as a log: no steps
    assert done.returncode == 3 and "not a training log" in done.stderr


def test_a_console_log_still_wins_over_logger_files(tmp_path):
    run = tensorboard_only(tmp_path)
    (run / "grpo.log").write_text("step:1 - critic/score/mean:0.5\n")
    opened = open_target(str(run))
    assert isinstance(opened.source, LocalFile) and opened.source.path == run / "grpo.log"
    assert isinstance(open_target(str(run), "tensorboard_log/proj/exp").source, LocalLoggerRun)


def test_report_and_status_read_these_runs(tmp_path):
    run = tensorboard_only(tmp_path)
    done = rlwatch("report", str(run), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)
    done = rlwatch("report", str(JSONL_V06))
    assert done.returncode == 0 and "step 4" in done.stdout
    environ = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    for _ in range(2):  # the second call, with a state kept by the first, says the same
        done = subprocess.run([str(RLWATCH), "status", str(run)], capture_output=True, text=True,
                              timeout=60, env=environ, stdin=subprocess.DEVNULL)
        assert done.returncode == 2 and done.stdout.startswith("proj/exp 6"), done.stdout
        assert "loss-nan" in done.stdout


def test_verls_own_tensorboard_only_run_gives_what_its_console_pointed_at(tmp_path):
    run = without_console("verl_08_tensorboard_only", tmp_path)
    alone, done = check(str(run))
    with_console, _ = check(str(GENERATED / "verl_08_tensorboard_only"))
    assert alone["run"]["log"] == str(run / "tensorboard_log" / "rlwatch_fixtures"
                                      / "verl_08_tensorboard_only"), done.stderr
    assert alone["latest"] == with_console["latest"] and len(alone["latest"]) >= 64
    assert alone["run"]["steps"] == with_console["run"]["steps"] == 9  # steps 0..8
    assert alone["run"]["last_step"] == 8
    # Only the console said the total: with it the run is finished, without it the
    # files cannot say so.
    assert with_console["run"]["total_steps"] == 8 and alone["run"]["total_steps"] is None


def test_verls_own_bare_jsonl_gives_its_exact_values(tmp_path):
    jsonl = GENERATED / "verl_09_file_only" / "rlwatch_fixtures" / "verl_09_file_only.jsonl"
    alone, done = check(str(jsonl))
    assert done.returncode == 2, done.stderr  # NaN grad norm at step 7 (orjson's null)
    with_console, _ = check(str(GENERATED / "verl_09_file_only"))
    assert alone["latest"] == with_console["latest"] and alone["run"]["last_step"] == 8
    nan = [f for f in alone["findings"] if f["rule"] == "loss-nan"]
    assert nan and nan[0]["first_step"] == 7
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert alone["latest"]["critic/score/mean"] == records[-1]["data"]["critic/score/mean"]


def test_a_running_verl_snapshot_reads_its_jsonl_and_event_twin_together(tmp_path):
    run = without_console("verl_12_running_snapshot", tmp_path)
    result, done = check(str(run))
    jsonl = run / "rlwatch_fixtures" / "verl_12_running_snapshot.jsonl"
    events = run / "tensorboard_log" / "rlwatch_fixtures" / "verl_12_running_snapshot"
    assert str(jsonl) in done.stderr and str(events) in done.stderr
    assert result["run"]["log"] in (str(jsonl), str(events))
    records = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    assert result["run"]["last_step"] == records[-1]["step"] == 6
    for key, value in records[-1]["data"].items():  # the JSONL's exact values win over float32
        if isinstance(value, float):
            assert result["latest"][key] == value, key


def test_an_export_of_verls_torch_written_events_reads_as_they_do(tmp_path):
    """What EventAccumulator shows of verl's own file (torch's add_scalar) it shows of ours."""
    from tests.support import accumulated

    run = without_console("verl_08_tensorboard_only", tmp_path)
    done = rlwatch("export", str(run), "--tensorboard", str(tmp_path / "tb"))
    assert done.returncode == 0, done.stderr
    theirs = accumulated(run / "tensorboard_log" / "rlwatch_fixtures" / "verl_08_tensorboard_only")
    assert accumulated(tmp_path / "tb") == theirs and len(theirs) >= 64


def test_a_log_file_that_is_not_verls_console_does_not_hide_the_logger_files(tmp_path):
    run = without_console("verl_08_tensorboard_only", tmp_path)
    log = hydra_leftovers(run, age_s=3600)
    result, done = check(str(run))
    assert result["run"]["log"].endswith("verl_08_tensorboard_only"), done.stderr
    assert result["run"]["last_step"] == 8
    assert f"{log} has no verl step lines" in done.stderr
    # verl's own console without a step line names its logger: it stays the run's log.
    result, _ = check(str(GENERATED / "verl_08_tensorboard_only"))
    assert result["run"]["log"].endswith("console.log") and result["run"]["total_steps"] == 8


def test_a_young_console_newer_than_old_logger_files_is_kept(tmp_path):
    run = tensorboard_only(tmp_path)
    for path in run.rglob("events.out.tfevents.*"):
        os.utime(path, (time.time() - 7200, time.time() - 7200))
    (run / "grpo.log").write_text("Starting the trainer\n")  # no step line, no config yet
    opened = open_target(str(run))
    assert isinstance(opened.source, LocalFile) and opened.source.path == run / "grpo.log"


@pytest.mark.parametrize(("target", "host"), [
    ("gpu:/runs/cola", "gpu"),
    ("ssh://me@gpu:2222/runs/cola", "gpu"),
    ("slurm://me@login/812", "login"),
    ("ray+http://10.0.0.1:8265/raysubmit_1", "10.0.0.1"),
    ("ray://me@head/raysubmit_1", "head"),
    ("/runs/cola", None),
])
def test_the_host_a_run_is_read_from_whatever_the_target_form(target, host):
    # A fleet's row names it: a Slurm or Ray job's was shown as "slurm", "ray" or "local".
    assert target_host(target) == host


@pytest.mark.parametrize(("target", "login"), [
    ("me@gpu:/runs/cola", ("gpu", "me", None)),
    ("slurm://me@login/812", ("login", "me", None)),
    # ray://'s PORT is the dashboard's on the head, not SSH's: the login is the head's own.
    ("ray://me@head:8300/raysubmit_1", ("head", "me", None)),
    ("ray+http://10.0.0.1:8265/raysubmit_1", None),  # HTTP: no SSH login to share
    ("/runs/cola", None),
])
def test_the_ssh_login_a_fleet_shares_for_each_target_form(target, login):
    remote = pooled_target(target)
    assert (remote and (remote.host, remote.user, remote.port)) == login
