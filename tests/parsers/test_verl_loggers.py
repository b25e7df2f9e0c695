"""What a console log says about the run's other loggers: announcements, names, the logger list."""

from pathlib import PurePath

from tests.corpus import all_verl_logs, verl_log
from tui.parsers.verl_loggers import LoggerHints, logger_hints


def text(prefix: str) -> str:
    return verl_log(prefix).read_bytes().decode("utf-8", "replace")


def test_the_config_dump_of_a_real_run_names_project_experiment_and_loggers():
    hints = logger_hints(text("027"))  # pprint lines behind a Ray prefix
    assert (hints.project, hints.experiment) == ("verl_example", "smol135m_grpo")
    assert hints.loggers == {"console"} and hints.uses("file") is False
    assert hints.tensorboard_paths() == [PurePath("tensorboard_log/verl_example/smol135m_grpo")]
    assert hints.jsonl_paths() == [PurePath("verl_example/smol135m_grpo.jsonl")]
    assert logger_hints(text("035")).loggers == {"console", "wandb"}


def test_every_corpus_log_reads_without_error_and_excerpts_say_nothing():
    for path in all_verl_logs():
        logger_hints(path.read_bytes().decode("utf-8", "replace"))
    assert logger_hints(text("036")) == LoggerHints()
    assert logger_hints(text("036")).uses("tensorboard") is None


def test_verls_own_announcements_with_prefix_and_colours():
    # The print() calls of verl's FileLogger and _TensorboardAdapter, as Ray forwards them.
    log = ("\x1b[2m\x1b[36m(TaskRunner pid=9)\x1b[0m Creating file logger at ./proj/exp 1.jsonl\r\n"
           "(TaskRunner pid=9) Saving tensorboard log to /data/tb/exp.\n")
    hints = logger_hints(log)
    assert hints.jsonl == "./proj/exp 1.jsonl" and hints.tensorboard == "/data/tb/exp"
    assert hints.jsonl_paths() == [PurePath("proj/exp 1.jsonl")]
    assert hints.tensorboard_paths() == [PurePath("/data/tb/exp")]


def test_the_last_mention_wins_in_a_log_a_restarted_run_appended_to():
    log = ("'experiment_name': 'first',\nSaving tensorboard log to tb/first.\n"
           "'experiment_name': 'second',\nSaving tensorboard log to tb/second.\n")
    hints = logger_hints(log)
    assert hints.experiment == "second" and hints.tensorboard == "tb/second"


def test_hydra_overrides_on_the_echoed_command_line():
    hints = logger_hints("+ python3 -m verl.trainer.main_ppo 'trainer.logger=[\"console\",\"file\"]' "
                         "trainer.project_name=p trainer.experiment_name=e\n")
    assert hints.loggers == {"console", "file"} and (hints.project, hints.experiment) == ("p", "e")
    assert logger_hints("trainer.logger=[console,tensorboard]").loggers == {"console", "tensorboard"}
