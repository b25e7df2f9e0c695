"""The settings file: read without ever stopping the app, rewritten without losing the user's keys."""

from __future__ import annotations

import os

import pytest

from tui.config import Config, config_dir, load_config, save_theme, to_toml, tomllib


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A HOME of its own: the real ~/.config is never read or written."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return tmp_path


def test_it_lives_in_the_users_config_directory(home):
    assert config_dir() == home / ".config" / "rlwatch"


def test_no_file_means_the_defaults(home):
    assert load_config() == Config()


def test_the_three_keys_are_read(home):
    path = config_dir() / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('theme = "rlwatch-light"\nascii = true\nnotify = ["ntfy://runs", "json://127.0.0.1/hook"]\n')
    config = load_config()
    assert (config.theme, config.ascii, config.problem) == ("rlwatch-light", True, None)
    assert config.notify == ["ntfy://runs", "json://127.0.0.1/hook"]


@pytest.mark.parametrize(("text", "problem"), [
    ("theme = \n", "config.toml: "),
    ("theme = 3\n", "theme must be a name in quotes"),
    ('ascii = "yes"\n', "ascii must be true or false"),
    ('notify = "ntfy://runs"\n', "notify must be a list of Apprise URLs in quotes"),
    ('notify = [3]\n', "notify must be a list of Apprise URLs in quotes"),
    (b"\xff\xfe", "config.toml: "),
])
def test_a_bad_file_is_one_problem_and_the_defaults(tmp_path, text, problem):
    path = tmp_path / "config.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    config = load_config(path)
    assert config.theme is None and config.ascii is None and config.notify == []
    assert problem in config.problem and config.problem.endswith("settings ignored")


def test_remembering_a_theme_keeps_every_other_key(home):
    path = config_dir() / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('# mine\nascii = true\ntheme = "rlwatch-dark"\nwidth = 3\n'
                    'tags = ["a", "b"]\n"odd key" = 1.5\n\n[keys]\ncycle-theme = "T"\n')
    assert save_theme("rlwatch-light") is None
    assert tomllib.loads(path.read_text()) == {
        "ascii": True, "theme": "rlwatch-light", "width": 3, "tags": ["a", "b"], "odd key": 1.5,
        "keys": {"cycle-theme": "T"}}
    assert os.listdir(path.parent) == ["config.toml"]  # no half-written file left beside it


def test_the_first_switch_creates_the_file(home):
    assert save_theme("rlwatch-colorblind") is None
    assert load_config().theme == "rlwatch-colorblind"


def test_a_file_it_cannot_rewrite_faithfully_is_left_alone(tmp_path):
    path = tmp_path / "config.toml"
    original = 'theme = "x"\nwhen = 2024-01-01\n[a.b]\nc = 1\n'
    path.write_text(original)
    problem = save_theme("rlwatch-light", path)
    assert problem.startswith("theme not remembered: ") and path.read_text() == original
    path.write_text("theme = [\n")
    assert save_theme("rlwatch-light", path).startswith("theme not remembered: ")


def test_an_unwritable_place_is_a_problem_not_a_crash(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    assert save_theme("rlwatch-light", blocker / "config.toml").startswith("theme not remembered: ")


def test_toml_writing_round_trips_what_the_settings_hold():
    data = {"theme": 'say "hi"\n\\', "n": -2, "f": 0.25, "on": False, "list": [1, 2],
            "table": {"k": "v", "weird key": True}}
    assert tomllib.loads(to_toml(data)) == data
    with pytest.raises(TypeError):
        to_toml({"nested": {"too": {"deep": 1}}})
