"""``rlwatch check`` against the breadth corpus: the verdict a careful human reads from each real log.

Every folder under tests/fixtures/logs holds real logs (copied from public
issues and committed files, or written by real trainers run for this project)
with an ``expected.toml`` written by reading the raw text: the run's state,
the exception line a crash ends on, the last step, the total and a few values.
The command is run as a user runs it, on the file as it is.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import REPO, rlwatch_key
from tui.cli.check import judged, report, unreadable
from tui.rules.rule_file import load_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

LOGS = REPO / "tests" / "fixtures" / "logs"
# A verdict state and the exit status ``check`` gives it.
EXIT = {"crashed": 2}


def samples() -> list[tuple[Path, dict]]:
    """Every sample of every expected.toml, with the folder it lives in."""
    found = []
    for expected in sorted(LOGS.glob("**/expected.toml")):
        for sample in tomllib.loads(expected.read_text(encoding="utf-8")).get("sample", []):
            found.append((expected.parent, sample))
    return found


SAMPLES = samples()

# Where rlwatch's verdict differs from the reader's, and why it cannot know better
# from the log alone. Each is a real limit, kept visible as an expected failure.
LIMITS = {
    "rocmbuild4358_hip_oom_traceback_then_app_log_continues.log":
        "a long-running app (not a trainer) caught an OOM and logged on; in a trainer log the "
        "same last exception ends the run",
    "ray8000_raysgd_finished_val_dict_then_worker_died_warning_success_nearmiss.log":
        "the run's end is the script's own 'success!': no step, total or end marker says finished",
    "kohya1188_accelerate_rich_box_traceback_calledprocesserror.log":
        "the excerpt holds only the body of a Rich traceback box, cut before its header and "
        "its exception line",
    "vllm17242_ray_prefixed_native_backtrace_frames_segfault.log":
        "the excerpt holds only native backtrace frames, cut before the segfault's header",
    "grpo_callback_sys_exit.log":
        "the script's own 'aborting' line and sys.exit(1): SystemExit prints nothing, so only "
        "the script's words say the run ended",
}
# Where the reader took a run's step count or total from a line rlwatch does not read as
# training progress: a progress bar without a description outside a trainer's own grammar
# (it might as well be an evaluation or a data-loading bar), or a trainer it does not read.
STEPS_UNREAD = {
    "bojieli_verl_sft_hydra_error_executing_job_two_unprefixed_copies.log": "total from a window's context",
    "easydel78_tqdm_glued_jax_simplifiedtraceback_xla_hbm_oom.log": "EasyDeL's bare 0/12000 bar",
    "llamafactory8261_line_numbered_dict_steps_tqdm_glued_rank_watchdog.log":
        "LLaMA-Factory's bare bar behind a line-number paste",
    "opennmt1824_step_line_then_shell_killed.log": "OpenNMT's own 'Step N/M;' lines",
    "openr1420_trl_grpo_dict_steps_tqdm_glued_reward_parse_warnings_nearmiss.log":
        "one bare bar after the dicts, no bar before them to tie the count to",
    "trl2996_grpo_tqdm_glued_device_side_assert_indexing_cu.log": "one bare bar, no dict",
    "johnson_art_gather_exceptions_counter_in_tqdm_no_training_steps_nearmiss.log":
        "an agent's dataset bar",
    "grpo_crash_startup.log": "TRL's bare 0/30 bar of a run that died before its first metrics",
    "polymergnn_slurm_stderr_bare_bar_then_time_limit_cancelled.log":
        "a GNN's bare 0/50 bar in a Slurm stderr file, no trainer's grammar around it",
    "grpo_segfault.log": "TRL's bare 6/20 bar: the segfault took every dict with Python's buffer",
    "grpo_segfault_faulthandler.log": "TRL's bare 6/20 bar: the segfault took every dict with Python's buffer",
}
# Crashes rlwatch names by another line of the same failure than the reader chose.
NAMED_OTHERWISE = {
    "ascendpytorch43_worker_prefixed_eh9999_npu_task_timeout_traceback_capital_b.log":
        "named by the first CANN error line of the block (EH9999: Inner Error!)",
    "llamafactory8261_line_numbered_paste_nccl_watchdog_terminated.log":
        "named by the first NCCL line of the same rank's abort",
    "pytorchxla3470_tpu_xla_util_prefixed_resource_exhausted.log":
        "named by XLA's RESOURCE_EXHAUSTED line, of which torch_xla's line is a copy",
    "ray40696_job_submit_tail_then_job_failed_status_message_actor_died.log":
        "named by the job's status message (the actor died) rather than its 'failed' header",
    "arjuna52_slurm_script_killed_then_cgroup_oom_kill_event.log":
        "named by slurmstepd's cgroup oom-kill line, which says why the batch shell's python was Killed",
    "trinity309_launcher_error_prefixed_traceback_cut_before_exception.log":
        "named by the cut traceback's header, the row after the launcher's 'Explorer or Trainer failed:'",
}


def check(path: Path) -> tuple[int, dict | None, str]:
    done = subprocess.run([sys.executable, "-m", "tui", "check", str(path), "--json"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None, done.stderr


@pytest.mark.parametrize(("folder", "sample"), SAMPLES,
                         ids=[f"{folder.name}/{sample['file']}" for folder, sample in SAMPLES])
def test_the_verdict_is_what_a_reader_sees(folder: Path, sample: dict, tmp_path: Path):
    if sample["file"] in LIMITS:
        pytest.xfail(LIMITS[sample["file"]])
    # A copy written just now, as a log being looked at is: its age must not make it stalled
    # (and the fixture itself is left as it is).
    # A sample inside a run directory (a console beside its event files) is copied whole.
    top = sample["file"].split("/")[0]
    if (folder / top).is_dir():
        shutil.copytree(folder / top, tmp_path / top, copy_function=shutil.copy)
    else:
        shutil.copy(folder / top, tmp_path / top)
    path = tmp_path / sample["file"]
    status, result, stderr = check(path)
    if result is None and status == 3 and sample["state"] != "crashed" and (
            not {"last_step", "total_steps"} & set(sample) or sample["file"] in STEPS_UNREAD):
        return  # no step, bar or failure at all: "not a training log" is the honest answer
    assert result is not None, f"no verdict (exit {status}): {stderr}"
    run = result["run"]
    state = sample["state"]
    if path.is_dir() or path.suffix == ".jsonl":
        # verl's file logger and TensorBoard write metrics only: neither a crash nor the
        # run's end reaches them, so from these files alone a run is running or stalled.
        state = "running"
    if state == "running":
        # A live or cut-off log: no crash and no end; a stall depends on the clock.
        assert run["state"] in ("running", "stalled"), run
    else:
        assert run["state"] == state, (run, result["findings"])
    if state == "crashed":
        assert status == EXIT["crashed"]
        crash = next(f for f in result["findings"] if f["rule"] == "crash")
        said = (sample.get("exception") or sample.get("crash_line") or "").strip()
        if said and sample["file"] not in NAMED_OTHERWISE:
            # The line the reader names is the one the crash is named by, or among the
            # other failure lines its message names.
            assert said in crash["exception"] or crash["exception"] in said or said in crash["message"], \
                (said, crash["message"])
        for field in ("rank", "local_rank", "host"):
            if field in sample:  # where the reader saw the failure begin
                assert crash.get(field) == sample[field], (field, crash)
    elif sample["state"] != "crashed":
        assert not [f for f in result["findings"] if f["rule"] == "crash"
                    and f["severity"] == "critical"], result["findings"]
    if sample["file"] in STEPS_UNREAD:
        return
    if "last_step" in sample:
        # A reader writes 0 for "no step yet" where the trainer numbers from 1.
        none_yet = sample["last_step"] == 0 and run["steps"] == 0
        assert run["last_step"] == sample["last_step"] or (none_yet and run["last_step"] is None)
    if "total_steps" in sample:
        assert run["total_steps"] == sample["total_steps"]
    for printed, value in sample.get("values", {}).items():
        key = rlwatch_key(sample.get("format", ""), printed)
        got = result["latest"].get(key)
        assert got is not None, f"{key} not read"
        if isinstance(value, float) and math.isnan(value):
            assert got == "nan", key
        elif isinstance(value, float) and isinstance(got, float):
            assert math.isclose(got, value, rel_tol=1e-6, abs_tol=1e-9), key
        else:
            assert got == value, key


def _verdict(path: Path) -> tuple:
    """What ``check`` says of a log, read in this process: state (running and stalled are
    one: a copy's age is not the log's), the exception line, last step, total."""
    session = asyncio.run(judged(str(path), None, False, load_rules()))
    if unreadable(session.model, quiet=True):
        return ("unreadable",)
    result = report(str(path), session.model, session.findings)
    crash = next((f["exception"] for f in result["findings"] if f["rule"] == "crash"), None)
    state = result["run"]["state"].replace("stalled", "running")
    return state, crash, result["run"]["last_step"], result["run"]["total_steps"]


# How logs reach a reader with something in front of every line that is not the log's:
# a Markdown indented code block (4 spaces or a TAB), pdsh/clush's host (DeepSpeed's
# multi-node launcher runs pdsh), ``mpirun --tag-output``'s rank.
RELAYED = {
    "indented": lambda data: b"".join(b"    " + line for line in _lines(data)),
    "tab-indented": lambda data: b"".join(b"\t" + line for line in _lines(data)),
    "pdsh": lambda data: b"".join(b"node01: " + line for line in _lines(data)),
    "mpirun-tagged": lambda data: b"".join(b"[1,0]<stdout>:" + line for line in _lines(data)),
}


def _lines(data: bytes) -> list[bytes]:
    """``data``'s lines, newlines kept (a ``\\r`` redraw is not a line: splitlines would say so)."""
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return [line for line in lines if line]


# Samples whose indentation is the user's paste's and starts below the first line (the first
# line at column 0, every line from the traceback on one space in): a paste is made after any
# relay, so its indentation stands in front of a relay's label, never behind it as the derived
# variant would put it.
PASTE_INDENTED_BELOW_THE_FIRST_LINE = {
    "verl2133_sglang_hang_ctrl_c_two_scheduler_processes_interleaved_keyboardinterrupt_cut.log",
}


@pytest.mark.parametrize("relay", RELAYED)
def test_a_log_with_the_same_lead_on_every_line_is_judged_as_the_plain_one(relay: str, tmp_path: Path):
    differ = []
    for folder, sample in SAMPLES:
        path = folder / sample["file"]
        if not path.is_file() or path.suffix == ".jsonl" or "/" in sample["file"]:
            continue  # a run directory: its console is one reading of several
        if sample["file"] in PASTE_INDENTED_BELOW_THE_FIRST_LINE and "indented" not in relay:
            continue  # a label inside the paste's indentation: not a log anyone has
        copy = tmp_path / path.name
        copy.write_bytes(path.read_bytes())
        plain = _verdict(copy)
        copy.write_bytes(RELAYED[relay](path.read_bytes()))
        relayed = _verdict(copy)
        if relayed != plain:
            differ.append((sample["file"], plain, relayed))
    assert not differ, differ


# Healthy whole runs (the reader's "finished") whose verdict still counts a finding, and why
# each is real; every other healthy whole run must read healthy (no warning, no critical:
# what it sat outside of for long, what cleared and what cannot apply are notes).
STILL_COUNTED = {
    "ray_06_unhandled_errors_then_finished.log":
        ({"errors"}, "Ray printed a task's unhandled error mid-run and the run went on: an event, "
                     "standing until the user mutes it"),
    "ray-2.46-verl-0.4.1/ray_06_unhandled_errors_then_finished.log": ({"errors"}, "the same, Ray 2.46"),
    "grpo_finished.log": ({"step-time"}, "steps 15–20 took 6.4× the recent median: an event"),
    "grpo_finished_unbuffered.log": ({"step-time"}, "the same run, the same slow steps"),
    "rloo_finished.log": ({"step-time"}, "steps far slower than the recent median: an event"),
    "grpo_nan_reward.log": ({"step-time"}, "steps far slower than the recent median: an event"),
    "grpo_eval_steps_finished.log":
        ({"val-falling"}, "the last evaluation fell from the one before: a condition still true at the end"),
    "verl_13_env_paths_file_tensorboard/console.log":
        ({"val-falling"}, "the last validation fell 0.625 → 0.375: a condition still true at the end"),
    "verl_13_env_paths_file_tensorboard/run1_metrics.jsonl": ({"val-falling"}, "the same run's JSONL"),
    "verl_13_env_paths_file_tensorboard/tb/run1": ({"val-falling"}, "the same run's events"),
}
# MANIFEST.md: these runs were made with --nan-grad-at-step 7, a nan the checklist calls fatal
# (each read from its console, its JSONL and its TensorBoard events).
MADE_WITH_A_NAN = [
    "verl_09_file_only/console.log",
    "verl_09_file_only/rlwatch_fixtures/verl_09_file_only.jsonl",
    *(f"{run}/{reading}" for run, name in (
        ("verl_10_console_file_tensorboard", "verl_10_console_file_tensorboard"),
        ("verl-0.7.0/verl070_15_console_file_tensorboard", "verl070_15_console_file_tensorboard"))
      for reading in ("console.log", f"rlwatch_fixtures/{name}.jsonl",
                      f"tensorboard_log/rlwatch_fixtures/{name}")),
]
STILL_COUNTED.update({file: ({"loss-nan"}, "a nan grad norm, made on purpose") for file in MADE_WITH_A_NAN})
HEALTHY = [(folder, sample) for folder, sample in SAMPLES
           if sample["state"] == "finished" and sample["file"] not in LIMITS]


@pytest.mark.parametrize(("folder", "sample"), HEALTHY,
                         ids=[f"{folder.name}/{sample['file']}" for folder, sample in HEALTHY])
def test_a_healthy_whole_run_reads_healthy(folder: Path, sample: dict, tmp_path: Path):
    top = sample["file"].split("/")[0]
    if (folder / top).is_dir():
        shutil.copytree(folder / top, tmp_path / top, copy_function=shutil.copy)
    else:
        shutil.copy(folder / top, tmp_path / top)
    session = asyncio.run(judged(str(tmp_path / sample["file"]), None, False, load_rules()))
    counted = {f.rule for f in session.findings if f.counts and f.rule != "stalled"}
    # (stalled: a file logger's output says no end, and its copy's age is not the run's)
    assert counted == STILL_COUNTED.get(sample["file"], (set(), ""))[0], \
        [(f.rule, f.severity, f.said()) for f in session.findings if f.counts]
