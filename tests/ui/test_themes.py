"""Themes are data files; the app starts in the dark default."""

from __future__ import annotations

import pytest

from tests.corpus import verl_log
from tui.sources.local_file import LocalFile
from tui.ui.app import RlwatchApp
from tui.ui.themes import DEFAULT_THEME, ThemeError, load_theme, load_themes, themes_dir


def test_the_default_theme_ships_and_loads():
    assert (themes_dir() / f"{DEFAULT_THEME}.toml").is_file()
    themes = {theme.name: theme for theme in load_themes()}
    assert themes[DEFAULT_THEME].dark


def test_a_typo_in_a_theme_is_an_error_naming_the_file(tmp_path):
    bad = tmp_path / "mine.toml"
    bad.write_text('primary = "#123456"\nprimray = "#654321"\n')
    with pytest.raises(ThemeError, match=r"mine\.toml: unknown theme keys primray"):
        load_theme(bad)
    (tmp_path / "broken.toml").write_text("primary = \n")
    with pytest.raises(ThemeError, match="broken.toml"):
        load_themes(tmp_path)


def test_a_theme_without_a_name_is_named_after_its_file(tmp_path):
    (tmp_path / "plain.toml").write_text('primary = "#123456"\n')
    assert [theme.name for theme in load_themes(tmp_path)] == ["plain"]


async def test_the_app_uses_the_dark_default():
    app = RlwatchApp(LocalFile(verl_log("032")))
    async with app.run_test(size=(80, 24)):
        assert app.theme == DEFAULT_THEME
        assert app.current_theme.primary == load_theme(themes_dir() / f"{DEFAULT_THEME}.toml").primary
