"""Several runs on one command line: the words that name them (targets, @names from runs.toml,
globs), ``check A B --json`` (an array, the worst exit status) and ``status A B`` (one line for
tmux), each run as a user does, in a fresh interpreter."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.sshd import find_sshd
from tests.support import healthy_then_nan, rlwatch, step_lines
from tui.cli.fleet import listed_runs
from tui.cli.main import _command_first, build_parser
from tui.cli.run_list import RunListError, Wanted, is_fleet, wanted_runs


def fleet_of_three(tmp_path: Path) -> dict[str, Path]:
    """Three runs: a healthy one, one whose loss went nan (critical), one missing."""
    healthy = tmp_path / "runs" / "healthy"
    healthy.mkdir(parents=True)
    (healthy / "train.log").write_bytes(b"".join(step_lines(3)))
    broken = tmp_path / "runs" / "broken"
    broken.mkdir()
    log, nan_line = healthy_then_nan(broken)
    log.write_bytes(log.read_bytes() + nan_line)
    return {"healthy": healthy, "broken": broken, "missing": tmp_path / "runs" / "missing"}


def user_env(home: Path) -> dict[str, str]:
    """A user whose home (and so ~/.config/rlwatch and the status cache) is ``home``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("XDG_")}
    return {**env, "HOME": str(home), "LANG": "C.UTF-8"}


# Which words make a fleet


def test_several_targets_a_group_or_a_glob_make_a_fleet_one_target_does_not(tmp_path):
    (tmp_path / "a*b").mkdir()  # a directory whose name has a star is one run, as typed
    assert not is_fleet(["/runs/cola"]) and not is_fleet(["gpu:/runs/cola"])
    assert not is_fleet([str(tmp_path / "a*b")])
    assert is_fleet(["/runs/a", "/runs/b"]) and is_fleet(["@sweep"])
    assert is_fleet(["/runs/grpo-*"]) and is_fleet(["gpu:/runs/*"])


def test_every_command_that_takes_runs_takes_several_with_options_anywhere():
    parser = build_parser()
    args = parser.parse_args(_command_first(parser, ["/a", "--theme", "t", "gpu:/b", "@sweep"]))
    assert args.command == "watch" and args.target == ["/a", "gpu:/b", "@sweep"]
    args = parser.parse_args(_command_first(parser, ["--json", "check", "/a", "/b"]))
    assert args.command == "check" and args.json and args.target == ["/a", "/b"]
    args = parser.parse_args(_command_first(parser, ["status", "/a", "@g"]))
    assert args.target == ["/a", "@g"]


def test_gpus_belongs_to_one_run(tmp_path):
    done = rlwatch(str(tmp_path), str(tmp_path), "--gpus", "node2")
    assert done.returncode == 3 and "--gpus" in done.stderr and "Traceback" not in done.stderr


# runs.toml


RUNS_TOML = """
[runs]
cola = "gpu1:/runs/cola"
math = "/scratch/math"

[groups]
sweep = ["cola", "math", "gpu2:/runs/sweep-*"]
"""


def test_at_names_a_group_or_a_run_and_plain_words_are_targets(tmp_path):
    path = tmp_path / "runs.toml"
    path.write_text(RUNS_TOML)
    assert wanted_runs(["@sweep"], path) == [
        Wanted("gpu1:/runs/cola", "cola"), Wanted("/scratch/math", "math"), Wanted("gpu2:/runs/sweep-*")]
    assert wanted_runs(["cola", "@math", "@cola", "@sweep"], path) == [
        Wanted("cola"), Wanted("/scratch/math", "math"), Wanted("gpu1:/runs/cola", "cola"),
        Wanted("gpu2:/runs/sweep-*")]  # each run once


@pytest.mark.parametrize(("text", "said"), [
    (None, "no such file"),
    ("[runs\n", "runs.toml"),
    ('[runs]\ncola = 3\n', "[runs] must map names to targets"),
    ('[groups]\nsweep = "cola"\n', "[groups] must map names to lists"),
    (RUNS_TOML, "@nope: no run or group of that name"),
])
def test_a_bad_runs_file_or_an_unknown_name_is_one_clear_line(tmp_path, text, said):
    path = tmp_path / "runs.toml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(RunListError, match=said.replace("[", r"\[").replace("]", r"\]")):
        wanted_runs(["@nope"], path)


def test_the_runs_file_is_in_the_config_dir_with_the_others(tmp_path):
    fleet = fleet_of_three(tmp_path)
    config = tmp_path / "home" / ".config" / "rlwatch"
    config.mkdir(parents=True)
    (config / "runs.toml").write_text(
        f'[runs]\nok = "{fleet["healthy"]}"\nbad = "{fleet["broken"]}"\n[groups]\nboth = ["ok", "bad"]\n')
    done = rlwatch("check", "@both", "--json", env=user_env(tmp_path / "home"))
    assert [(run["name"], run["run"]["steps"]) for run in json.loads(done.stdout)] == [("ok", 3), ("bad", 31)]
    assert done.returncode == 2
    done = rlwatch("check", "@nope", env=user_env(tmp_path / "home"))
    assert done.returncode == 3 and done.stderr.startswith("rlwatch: @nope: no run or group")
    assert "Traceback" not in done.stderr


# check A B --json


def test_check_of_several_runs_is_an_array_and_exits_with_the_worst(tmp_path):
    fleet = fleet_of_three(tmp_path)
    done = rlwatch("check", str(fleet["healthy"]), str(fleet["broken"]), "--json")
    results = json.loads(done.stdout)
    assert [result["target"] for result in results] == [str(fleet["healthy"]), str(fleet["broken"])]
    assert [result["host"] for result in results] == ["local", "local"]
    assert any(f["rule"] == "loss-nan" for f in results[1]["findings"])
    assert done.returncode == 2  # the broken run's critical finding
    # One run that cannot be read is its own object, saying why; the status is then 3.
    done = rlwatch("check", str(fleet["healthy"]), str(fleet["missing"]), "--json")
    healthy, missing = json.loads(done.stdout)
    assert healthy["run"]["steps"] == 3
    assert missing == {"target": str(fleet["missing"]), "name": "runs/missing", "host": "local",
                       "error": f"{fleet['missing']}: no such file or directory"}
    assert done.returncode == 3


def test_check_of_a_glob_is_every_run_it_matches(tmp_path):
    fleet = fleet_of_three(tmp_path)
    done = rlwatch("check", str(tmp_path / "runs" / "*"), "--json")
    assert sorted(result["target"] for result in json.loads(done.stdout)) == sorted(
        [str(fleet["broken"]), str(fleet["healthy"])])
    done = rlwatch("check", str(tmp_path / "none-*"))
    assert done.returncode == 3 and "matches nothing" in done.stdout


def test_check_of_several_runs_in_words_says_each(tmp_path):
    fleet = fleet_of_three(tmp_path)
    done = rlwatch("check", str(fleet["healthy"]), str(fleet["broken"]))
    assert "healthy/train.log: running, step 3" in done.stdout
    assert "broken/grpo.log: running, step 31" in done.stdout and "loss-nan" in done.stdout


# status A B


def test_status_of_several_runs_counts_them_by_state_and_names_the_worst(tmp_path):
    fleet = fleet_of_three(tmp_path)
    env = user_env(tmp_path / "home")
    done = rlwatch("status", str(fleet["healthy"]), str(fleet["broken"]), env=env)
    assert done.stdout == "2 runs: 1 critical 1 running ✖ broken\n" and done.returncode == 2
    done = rlwatch("status", str(fleet["healthy"]), str(fleet["missing"]), env=env)
    assert done.stdout == "2 runs: 1 unreachable 1 running ✖ missing\n" and done.returncode == 3
    done = rlwatch("status", str(fleet["healthy"]), str(fleet["healthy"] / "train.log"), "--ascii", env=env)
    assert done.stdout == "2 runs: 2 running\n" and done.returncode == 0


@pytest.mark.skipif(find_sshd() is None, reason="OpenSSH's sshd is not installed")
def test_check_mixes_hosts_and_expands_a_glob_on_the_box(tmp_path):
    from tests.sshd import ClientHome, Sshd
    from tests.support import rlwatch_as

    home = ClientHome(tmp_path / "home")
    box = Sshd(tmp_path / "box", [home.public_key]).start()
    try:
        home.add_host("gpu", box.port)
        home.trust(box.known_hosts_line())
        fleet = fleet_of_three(tmp_path)
        done = rlwatch_as(home, "check", f"gpu:{tmp_path}/runs/*", str(fleet["healthy"]), "--json")
        results = json.loads(done.stdout)
        assert [(result["host"], result["name"]) for result in results] == [
            ("gpu", "runs/broken"), ("gpu", "runs/healthy"), ("local", "runs/healthy")]
        assert [result["run"]["last_step"] for result in results] == [31, 3, 3]
        assert done.returncode == 2
    finally:
        box.stop()


def test_the_fleet_screen_lists_its_runs_without_asking_a_box_and_expands_globs_itself(tmp_path):
    (tmp_path / "a").mkdir()
    found = listed_runs([str(tmp_path / "a"), "gpu:/runs/*", str(tmp_path / "grpo-*")])
    assert [(run.wanted.target, run.unexpanded) for run in found] == [
        (str(tmp_path / "a"), False), ("gpu:/runs/*", True), (str(tmp_path / "grpo-*"), True)]
