"""``rlwatch check``: the real command on real logs, its JSON contract and exit codes."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.corpus import REPO, verl_log
from tests.support import rlwatch, stalled_of, touch


def check_json(path, *extra: str) -> dict:
    done = rlwatch("check", str(path), "--json", *extra)
    assert done.stdout, f"exit {done.returncode}: {done.stderr}"
    result = json.loads(done.stdout)
    # The exit status follows the worst counted finding: notes and muted ones do not count.
    worst = {f["severity"] for f in result["findings"] if not f["muted"]}
    expected = 2 if "critical" in worst else 1 if "warning" in worst else 0
    assert done.returncode == expected, done.stderr
    return result


# Whole-run logs: (distinct steps, last step, total, {key: value at its last step}),
# each value read off the log by hand. 030 and 031 (verl 0.1) say their total only in the
# WorkerDicts' 'Total steps: N, num_warmup_steps: 0' (030 stops at step 105 of its 210).
WHOLE_RUNS = {
    "029": (59, 58, None, {"train/loss": 0.017, "val/loss": 0.411}),
    "030": (106, 105, 210, {"critic/score/mean": 0.682, "actor/entropy_loss": 0.149,
                            "timing/gen": 48.744}),
    "031": (435, 434, 435, {"timing/gen": 17.455, "critic/kl": 0.203}),
    "032": (1120, 1120, None, {"val/test_score/openai/gsm8k": 0.697, "critic/score/mean": 0.981,
                               "actor/pg_loss": 0.003, "timing_s/step": 81.267}),
    "033": (1120, 1120, None, {"val/test_score/openai/gsm8k": 0.701, "critic/vf_loss": 0.018,
                               "actor/pg_loss": 0.083}),
    "034": (211, 210, 210, {"critic/score/mean": 0.937, "timing_s/step": 705.786}),
    "035": (106, 105, 105, {"critic/score/mean": 0.987, "timing_s/step": 418.549}),
}


@pytest.mark.parametrize("prefix", sorted(WHOLE_RUNS))
def test_whole_run_logs_report_exact_values(prefix, tmp_path):
    steps, last_step, total, values = WHOLE_RUNS[prefix]
    # A copy written just now: 029 and 030 say neither their end nor a step time, so the
    # corpus file's own age (hours or days) would make them stalled.
    log = tmp_path / verl_log(prefix).name
    shutil.copy(verl_log(prefix), log)
    result = check_json(log)
    assert set(result) == {"target", "run", "latest", "findings", "accelerators", "job"}
    assert result["target"] == str(log) and result["run"]["log"] == str(log)
    assert result["run"]["steps"] == steps and result["run"]["last_step"] == last_step
    assert result["run"]["total_steps"] == total
    for key, value in values.items():
        assert result["latest"][key] == value, key
    assert result["accelerators"] == [] and result["job"] is None  # a plain log has no scheduler
    # Healthy whole runs: outside some checklist bands, never critical.
    assert [f for f in result["findings"] if f["severity"] == "critical"] == []


def test_progress_bar_run_reports_rate_and_eta(tmp_path):
    data = verl_log("034").read_bytes()
    half = tmp_path / "running.log"  # the same run halfway, as a log still being written is
    half.write_bytes(data[: data.index(b"\n", len(data) // 2) + 1])
    running = check_json(half)["run"]
    assert running["state"] == "running" and running["sec_per_it"] > 0 and running["eta_s"] > 0
    # Over, it has no time left to tell: null, not tqdm's last 0 (nor a crashed run's last 50 s).
    finished = check_json(verl_log("034"))["run"]
    assert finished["state"] == "finished" and finished["sec_per_it"] > 0 and finished["eta_s"] is None


def test_a_crashed_run_has_no_eta_in_json_or_text(tmp_path):
    log = tmp_path / "crashed.log"  # a verl run whose bar says 8 of 16 steps left, then a traceback
    log.write_bytes(b"Training Progress:  50%|#####     | 8/16 [01:20<01:20, 10.00s/it]\n"
                    b"step:8 - critic/score/mean:0.5 - timing_s/step:10\n"
                    b"Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nRuntimeError: boom\n")
    run = check_json(log)["run"]
    assert run["state"] == "crashed" and run["eta_s"] is None
    text = rlwatch("check", str(log)).stdout
    assert "ETA —" in text and "ETA 0" not in text


def test_non_finite_values_are_strings_in_json():
    latest = check_json(verl_log("036"))["latest"]
    assert latest["critic/vf_loss"] == "nan" and latest["critic/grad_norm"] == "nan"


def test_run_directory_finds_its_log_and_says_which(tmp_path):
    shutil.copy(verl_log("031"), tmp_path / "train.log")
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    done = rlwatch("check", str(tmp_path), "--json")
    assert done.returncode == 0  # 031 sits outside several checklist bands: notes, not counted
    assert json.loads(done.stdout)["run"]["log"] == str(tmp_path / "train.log")
    assert "train.log" in done.stderr


def test_log_option_overrides_discovery(tmp_path):
    shutil.copy(verl_log("031"), tmp_path / "a.log")
    shutil.copy(verl_log("036"), tmp_path / "b.log")
    done = rlwatch("check", str(tmp_path), "--log", "b.log", "--json")
    assert json.loads(done.stdout)["run"]["steps"] == 1


def test_text_report_names_the_panels():
    done = rlwatch("check", str(verl_log("032")))
    assert done.returncode == 0  # a healthy run: its long-standing bands are notes
    assert "train reward" in done.stdout and "0.981" in done.stdout and "step 1120" in done.stdout


# -- bad input: one clear line on stderr, exit 3, never a traceback ----------

def assert_unreadable(done, fragment: str):
    assert done.returncode == 3, done
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("rlwatch: ") and fragment in done.stderr
    assert done.stderr.count("\n") == 1


def test_missing_path(tmp_path):
    assert_unreadable(rlwatch("check", str(tmp_path / "nope.log")), "no such file")


def test_empty_file(tmp_path):
    (tmp_path / "empty.log").write_bytes(b"")
    assert_unreadable(rlwatch("check", str(tmp_path / "empty.log")), "not a training log")


def test_binary_junk(tmp_path):
    (tmp_path / "junk.log").write_bytes(os.urandom(300_000))
    assert_unreadable(rlwatch("check", str(tmp_path / "junk.log")), "not a training log")


def test_ten_megabyte_line_and_invalid_utf8_around_real_steps(tmp_path):
    data = (b"\xff\xfe\xfa not utf-8\n" + b"z" * (10 * 1024 * 1024) + b"\n"
            + verl_log("036").read_bytes())
    (tmp_path / "mixed.log").write_bytes(data)
    result = json.loads(rlwatch("check", str(tmp_path / "mixed.log"), "--json").stdout)
    assert result["run"]["steps"] == 1 and result["latest"]["critic/vf_explained_var"] == -72.348


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to check as an unprivileged user")
def test_unreadable_path_as_an_ordinary_user(tmp_path):
    tmp_path.chmod(0o755)
    log = tmp_path / "secret.log"
    log.write_bytes(verl_log("036").read_bytes())
    log.chmod(0o600)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         sys.executable, "-m", "tui", "check", str(log)],
        capture_output=True, text=True, timeout=60, env=env, cwd="/")
    assert_unreadable(done, "permission denied")


HUNG_AT_START = (Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "generated" / "ray"
                 / "ray_17_unschedulable_gpu_stall.log")


def test_a_run_hung_before_its_first_step_is_stalled_not_unreadable(tmp_path):
    """Ray's actors wait for a GPU that never frees up: the log holds the run's start and
    the autoscaler's complaints, no step. Read as it is written it is running; once nothing
    has been written for an hour, stalled (it used to be "not a training log")."""
    log = tmp_path / "grpo.log"
    shutil.copy(HUNG_AT_START, log)
    done = rlwatch("check", str(log))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{log}: running, no step yet (the log shows a Ray actor's output)")
    touch(log, "2 hours ago")
    done = rlwatch("check", str(log), "--json")
    assert done.returncode == 2, done.stderr
    result = json.loads(done.stdout)
    assert (result["run"]["state"], result["run"]["last_step"]) == ("stalled", None)
    assert stalled_of(done)["message"].startswith("no step yet and nothing written for 2 h")


def test_a_run_that_crashed_before_its_first_step_has_no_step_not_no_step_yet(tmp_path):
    """A crash ends the run: no step will follow, so the summary does not promise one."""
    log = tmp_path / "grpo.log"
    shutil.copy(verl_log("018"), log)
    done = rlwatch("check", str(log))
    assert done.returncode == 2, done.stderr
    assert done.stdout.startswith(f"{log}: crashed, no step\n"), done.stdout


def test_an_old_text_that_is_no_run_stays_unreadable(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("lr=1e-6 worked better than 3e-6\nkl_coef 0.001\n")
    touch(notes, "2 days ago")
    assert_unreadable(rlwatch("check", str(notes)), "not a training log")


def test_a_stalled_run_says_how_long_since_its_last_step_instead_of_an_eta(tmp_path):
    log = tmp_path / "hung.log"
    log.write_bytes(b"Training Progress:  50%|#####     | 8/16 [01:20<01:20, 10.00s/it]\n"
                    b"step:8 - critic/score/mean:0.5 - timing_s/step:10\n")
    hour_ago = time.time() - 3600
    os.utime(log, (hour_ago, hour_ago))
    run = check_json(log)["run"]
    assert run["state"] == "stalled" and run["eta_s"] is None
    text = rlwatch("check", str(log)).stdout
    assert "no step for 1 h 00 min (a step takes 10 s)" in text and "ETA" not in text


@pytest.mark.parametrize("name", ["gloo_rank1_hang_still_hanging.log", "nccl_rank1_hang_still_hanging.log"])
def test_a_rank_hung_in_a_collective_reads_stalled_once_the_log_has_gone_quiet(tmp_path, name):
    # Real logs copied while one rank of two slept before its all-reduce (a hang prints nothing).
    log = tmp_path / name
    shutil.copy(REPO / "tests" / "fixtures" / "logs" / "generated" / "ddp" / name, log)
    ten_minutes_ago = time.time() - 600
    os.utime(log, (ten_minutes_ago, ten_minutes_ago))
    result = check_json(log)
    assert result["run"]["state"] == "stalled" and result["run"]["eta_s"] is None
    assert not [f for f in result["findings"] if f["rule"] in ("crash", "errors")]


def test_mute_on_the_command_line_stops_a_warning_counting(tmp_path):
    """034's 22,543 s step and length surge are warnings until the user mutes them."""
    log = tmp_path / verl_log("034").name
    shutil.copy(verl_log("034"), log)
    assert rlwatch("check", str(log)).returncode == 1
    done = rlwatch("check", str(log), "--json", "--mute", "step-time,length-jump,errors")
    assert done.returncode == 0, done.stdout
    muted = [f["rule"] for f in json.loads(done.stdout)["findings"] if f["muted"]]
    assert set(muted) == {"step-time", "length-jump", "errors"}
    assert "(muted)" in rlwatch("check", str(log), "--mute", "step-time").stdout
    bad = rlwatch("check", str(log), "--mute", "step-tme")
    assert bad.returncode == 3 and "no rule named 'step-tme' to mute" in bad.stderr
