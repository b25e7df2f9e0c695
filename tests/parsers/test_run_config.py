"""The config a run printed at start, read as dotted keys, and the keys where runs differ."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus import REPO, all_verl_logs, verl_log
from tui.parsers.run_config import (
    ABSENT,
    CONFIG_HEAD_BYTES,
    UNKNOWN,
    RunConfig,
    differing_keys,
    parse_run_config,
)
from tui.parsers.text import clean_segments

CONFIGS = REPO / "tests" / "fixtures" / "configs"
CRASHES = REPO / "tests" / "fixtures" / "logs" / "crashes"
RAY = REPO / "tests" / "fixtures" / "logs" / "generated" / "ray"


def config_of(path: Path) -> RunConfig:
    """The config of a log as the session reads it: from its first CONFIG_HEAD_BYTES."""
    config = parse_run_config(path.read_bytes()[:CONFIG_HEAD_BYTES])
    assert config is not None, f"no config found in {path.name}"
    return config


def flattened(value: object, prefix: str = "") -> dict[str, object]:
    """The oracle: a literal evaluated by Python itself, flattened to dotted keys."""
    if isinstance(value, dict) and value:
        out: dict[str, object] = {}
        for key, item in value.items():
            out.update(flattened(item, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: value}


def test_verls_pprinted_config_behind_a_ray_prefix_as_dotted_keys():
    log = verl_log("027")
    config = config_of(log)
    assert config.complete
    values = config.values
    assert values["algorithm.adv_estimator"] == "grpo"
    assert values["data.train_batch_size"] == "128"
    assert values["actor_rollout_ref.actor.optim.lr"] == "1e-06"
    assert values["actor_rollout_ref.rollout.n"] == "8"
    assert values["trainer.logger"] == "[console]"
    assert values["trainer.rollout_data_dir"] == "null"
    assert values["trainer.val_before_train"] == "true"
    assert values["actor_rollout_ref.actor.checkpoint.load_contents"] == "[model, optimizer, extra]"
    # Where it was printed: the first line of the dict, through the line that closes it.
    data = log.read_bytes()
    assert data[config.offset:].startswith(b"(TaskRunner pid=247607) {'actor_rollout_ref'")
    assert data[:config.end].endswith(b"'trace': 'cuda,nvtx,cublas,ucx'}}}\n")


def test_reading_by_column_gives_what_python_evaluates_on_every_intact_printed_config():
    """Every real config that is a whole literal: the column reading equals literal_eval's."""
    checked = 0
    for log in [*all_verl_logs(), *sorted(RAY.glob("*.log"))]:
        head = log.read_bytes()[:CONFIG_HEAD_BYTES]
        config = parse_run_config(head)
        if config is None or not config.complete:
            continue
        text = "\n".join(" ".join(clean_segments(line))
                         for line in head[config.offset:config.end].decode().splitlines())
        try:
            oracle = flattened(ast.literal_eval(text.strip()))
        except (SyntaxError, ValueError):
            continue  # damaged (030) or cut by the terminal (051): the tests below
        assert set(oracle) == set(config.values), log.name
        for key, value in oracle.items():
            shown = config.values[key]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert float(shown) == value, (log.name, key)
            elif isinstance(value, str):
                assert shown == value, (log.name, key)
        checked += 1
    assert checked >= 20


def test_a_config_that_lost_a_line_to_another_process_keeps_its_other_keys():
    """Corpus 030: wandb's output replaced a line of the dict (its braces never balance)
    and a Ray actor's line was glued to the end of another; the keys around both stand."""
    values = config_of(verl_log("030")).values
    assert values["reward_model.model.fsdp_config.min_num_params"] == "0"
    assert values["reward_model.model.input_tokenizer"] == "sft_model_path/global_step_58"
    assert values["reward_model.model.path"] == "~/models/FsfairX-LLaMA3-RM-v0.1"
    assert values["trainer.experiment_name"] == "gemma2b_function_rm"
    assert values["trainer.total_epochs"] == "15"
    assert values["algorithm.kl_ctrl.kl_coef"] == "0.001"  # a short dict pprint kept on one line


def test_a_one_line_config_a_terminal_cut_into_rows():
    """Corpus 051: the SFT trainer's print(config), pasted from a 213-column terminal."""
    values = config_of(verl_log("051")).values
    assert values["data.val_files"] == "/root/ReTool-SFT/data/train-00000-of-00001.parquet"
    assert values["optim.betas"] == "[0.9, 0.95]"
    assert values["model.partial_pretrain"] == "/root/verl/recipe/retool/model/Qwen2.5-32B-Instruct"


def test_the_same_config_printed_as_pprint_and_as_yaml_reads_the_same():
    """verl 0.9.1's real config, composed by Hydra, printed by OmegaConf both ways."""
    printed = config_of(CONFIGS / "verl_pprint.log")
    yaml = config_of(CONFIGS / "verl_yaml.log")
    assert len(printed.values) > 800 and printed.values == yaml.values
    assert yaml.values["actor_rollout_ref.rollout.n"] == "5"  # YAML quotes the key 'n'
    assert yaml.values["actor_rollout_ref.actor.optim.betas"] == "[0.9, 0.999]"


def test_the_launch_commands_overrides_agree_with_the_resolved_config():
    config = config_of(CONFIGS / "verl_pprint.log")
    assert config.overridden == {
        "algorithm.adv_estimator", "data.train_batch_size", "data.max_response_length",
        "actor_rollout_ref.model.path", "actor_rollout_ref.actor.optim.lr",
        "actor_rollout_ref.actor.use_kl_loss", "actor_rollout_ref.rollout.n", "trainer.logger",
        "trainer.total_epochs", "trainer.note"}
    assert config.values["trainer.logger"] == "[console, wandb]"  # shell-quoted on the command line
    assert config.values["trainer.note"] == "sweep-a"  # +key=value adds a key
    for prefix in ("027", "034", "035"):  # real runs: every override is what the run resolved
        real = config_of(verl_log(prefix))
        alone = parse_run_config(b"".join(line for line in verl_log(prefix).read_bytes().splitlines(True)
                                          if b"main_ppo" in line and b"=" in line))
        assert alone is not None and not alone.complete and set(alone.values) == real.overridden
        assert all(real.values[key] == value for key, value in alone.values.items()), prefix


def test_without_a_printed_config_the_command_line_is_what_is_known():
    config = config_of(verl_log("029"))  # the SFT trainer's torchrun line, keys given twice
    assert config.complete  # it printed its config too
    alone = parse_run_config(verl_log("029").read_bytes().split(b"W1217", 1)[0])
    assert alone is not None and not alone.complete
    assert alone.values["trainer.experiment_name"] == "gsm8k-sft-gemma-2-2b-it"  # the last wins
    assert alone.values["data.prompt_dict_keys"] == "[question]"  # '+data.prompt_dict_keys=[question]'
    assert alone.values["trainer.default_hdfs_dir"] == "null"
    assert alone.shown("model.lora_rank") == UNKNOWN


def test_hydras_error_line_lists_the_overrides():
    log = CRASHES / "bojieli_verl_sft_hydra_error_executing_job_two_unprefixed_copies.log"
    config = config_of(log)
    assert not config.complete and config.values
    assert log.read_bytes()[config.offset:].startswith(b"Error executing job with overrides: [")


def test_a_trainers_metrics_dict_is_not_a_config():
    assert parse_run_config(verl_log("013").read_bytes()) is None  # TRL's flat dict lines
    assert parse_run_config(verl_log("032").read_bytes()[:CONFIG_HEAD_BYTES]) is None


def test_keys_that_differ_between_fsdp_and_megatron_runs_of_one_recipe():
    fsdp, megatron = config_of(verl_log("034")), config_of(verl_log("035"))
    keys = differing_keys([fsdp, megatron])
    assert "actor_rollout_ref.actor.megatron.tensor_model_parallel_size" in keys
    assert fsdp.shown("actor_rollout_ref.actor.megatron.tensor_model_parallel_size") == ABSENT
    assert megatron.shown("actor_rollout_ref.actor.megatron.tensor_model_parallel_size") == "2"
    assert "algorithm.adv_estimator" not in keys  # gpg in both
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_a_run_known_only_by_its_command_line_differs_only_where_it_says_something():
    partial = parse_run_config(verl_log("030").read_bytes().split(b"\n", 8)[6] + b"\n")
    assert partial is not None and not partial.complete
    full = config_of(verl_log("031"))
    keys = differing_keys([partial, full, None])
    assert keys and all(key in partial.values for key in keys)
    assert "data.train_batch_size" in keys  # 512 against 256
    assert differing_keys([full, full]) == [] and differing_keys([None, None]) == []


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4000))
def test_any_bytes_give_a_config_or_none_never_an_error(data):
    parse_run_config(data)
    parse_run_config(b"{'data': {'x': " + data + b"\n (TaskRunner pid=1)  'y': [1,\n")


def test_a_deeply_nested_or_unclosed_dict_is_read_as_far_as_it_goes():
    # Deeper than Python's parser goes: one key, 'trainer', holding text; no section below it.
    assert parse_run_config(b"{'trainer': " * 5000 + b"1" + b"}" * 5000 + b"\n") is None
    assert parse_run_config(b"{'trainer': {'a': " + b"[" * 3000 + b"\n") is None  # one cut line
    cut = parse_run_config(b"{'trainer': {'a': 1,\n             'b': " + b"[" * 3000 + b"\n")
    assert cut is not None and cut.values == {"trainer.a": "1", "trainer.b": "[" * 3000}


def test_a_garbled_string_literal_warns_nobody(recwarn):
    """A backslash that is no Python escape (a terminal sequence's ``ESC \\``) would make
    Python warn on stderr, under the screen; the config is read without a word."""
    config = parse_run_config(b"{'trainer': {'experiment_name': 'a\\x1b\\\\q \\d'}}\n")
    assert config is not None and config.values["trainer.experiment_name"] == "a\x1b\\q \\d"
    assert not recwarn.list
