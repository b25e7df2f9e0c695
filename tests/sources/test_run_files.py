"""Finding a run's JSONL and event files where its log points, and nowhere else."""

import shutil
from pathlib import Path

from tests.corpus import verl_log
from tui.sources.run_files import find_logger_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RESUMED = FIXTURES / "tensorboard" / "resumed"
JSONL = FIXTURES / "jsonl" / "v0.7.1_orjson.jsonl"


def run_log(path: Path, loggers: str = "'console', 'file', 'tensorboard'", extra: str = "") -> Path:
    """Corpus log 027 (project verl_example, experiment smol135m_grpo) with another logger list."""
    text = verl_log("027").read_text(errors="replace").replace("'logger': ['console']",
                                                                f"'logger': [{loggers}]")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + extra)
    return path


def experiment_files(base: Path, experiment: str = "smol135m_grpo") -> None:
    shutil.copytree(RESUMED, base / "tensorboard_log" / "verl_example" / experiment)
    (base / "verl_example").mkdir(exist_ok=True)
    shutil.copy(JSONL, base / "verl_example" / f"{experiment}.jsonl")


def test_the_experiments_own_files_among_others(tmp_path):
    experiment_files(tmp_path)
    experiment_files(tmp_path, "another_experiment")
    found = find_logger_files(run_log(tmp_path / "grpo.log"), tmp_path)
    assert found.jsonl == tmp_path / "verl_example/smol135m_grpo.jsonl"
    assert found.tensorboard == tmp_path / "tensorboard_log/verl_example/smol135m_grpo"
    assert found.notes == (f"merging exact values from {found.jsonl}",
                           f"merging exact values from {found.tensorboard}")


def test_a_console_only_run_takes_nothing_even_beside_its_namesakes(tmp_path):
    experiment_files(tmp_path)  # a previous run of the same experiment, with other loggers
    found = find_logger_files(run_log(tmp_path / "grpo.log", loggers="'console'"), tmp_path)
    assert (found.jsonl, found.tensorboard, found.notes) == (None, None, ())


def test_a_log_excerpt_that_names_nothing_takes_nothing(tmp_path):
    experiment_files(tmp_path)
    log = tmp_path / "excerpt.log"
    shutil.copy(verl_log("036"), log)
    assert find_logger_files(log, tmp_path) == find_logger_files(log)
    assert find_logger_files(log).jsonl is None and find_logger_files(log).tensorboard is None


def test_paths_resolve_against_the_run_directory_when_the_log_sits_below_it(tmp_path):
    experiment_files(tmp_path)
    found = find_logger_files(run_log(tmp_path / "logs" / "grpo.log"), tmp_path)
    assert found.jsonl == tmp_path / "verl_example/smol135m_grpo.jsonl"
    assert find_logger_files(tmp_path / "logs" / "grpo.log").jsonl is None  # without the run dir


def test_announced_paths_win_over_the_default_layout(tmp_path):
    experiment_files(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(RESUMED, elsewhere / "tb")
    log = run_log(tmp_path / "grpo.log", extra=f"(TaskRunner pid=1) Saving tensorboard log to {elsewhere}/tb.\n")
    assert find_logger_files(log, tmp_path).tensorboard == elsewhere / "tb"


def test_a_run_copied_off_the_box_finds_its_files_by_the_announced_paths_tail(tmp_path):
    """The log says ``/home/u/runs/cola/proj/exp.jsonl`` (where the box ran it) and nothing
    else; the run directory was copied here, or is mounted elsewhere on a login node: the
    same layout under it."""
    log = tmp_path / "console.log"
    log.write_text("Total training steps: 8\n"
                   "Creating file logger at /home/u/runs/cola/proj/exp.jsonl\n")
    (tmp_path / "proj").mkdir()
    shutil.copy(JSONL, tmp_path / "proj" / "other.jsonl")  # not what the log names
    assert find_logger_files(log, tmp_path).jsonl is None
    shutil.copy(JSONL, tmp_path / "proj" / "exp.jsonl")
    assert find_logger_files(log, tmp_path).jsonl == tmp_path / "proj/exp.jsonl"


def test_a_logger_in_use_whose_files_are_missing_is_explained(tmp_path):
    found = find_logger_files(run_log(tmp_path / "grpo.log"), tmp_path)
    assert (found.jsonl, found.tensorboard) == (None, None)
    assert found.notes == (
        f"the run writes a file-logger JSONL, but none was found at "
        f"{tmp_path}/verl_example/smol135m_grpo.jsonl; values come from the console log",
        f"the run writes TensorBoard event files, but none was found at "
        f"{tmp_path}/tensorboard_log/verl_example/smol135m_grpo; values come from the console log")


def test_an_unreadable_log_finds_nothing(tmp_path):
    found = find_logger_files(tmp_path / "missing.log", tmp_path)
    assert (found.jsonl, found.tensorboard, found.notes) == (None, None, ())
