"""Colour themes, kept as data in ``themes/*.toml`` so users can read and copy them.

An installed wheel carries the folder as ``tui/themes`` (pyproject's
force-include); an editable install reads the repository's top-level
``themes/`` directly, so a theme edited there shows up without reinstalling.
A user's own themes are the ``*.toml`` files in ``~/.config/rlwatch/themes/``;
one that cannot be used is reported, never fatal.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

import tui
from tui.config import config_dir
from tui.regular_file import NotUtf8, read_utf8

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

DEFAULT_THEME = "rlwatch-dark"

_THEME_FIELDS = frozenset(field.name for field in dataclasses.fields(Theme))


class ThemeError(Exception):
    """A theme file that cannot be used; the message names the file and the problem."""


def themes_dir() -> Path:
    """Where the theme files are: inside the package when installed, else the repository's."""
    packaged = Path(tui.__file__).parent / "themes"
    if packaged.is_dir():
        return packaged
    return Path(tui.__file__).parent.parent / "themes"


def load_theme(path: Path) -> Theme:
    """One theme file as a Textual Theme; unknown keys are errors, not silently ignored."""
    try:
        data = tomllib.loads(read_utf8(path))  # never a FIFO or a device: those would hang
    except OSError as error:
        raise ThemeError(f"{path}: {error.strerror or error}") from None
    except (NotUtf8, tomllib.TOMLDecodeError) as error:
        raise ThemeError(f"{path}: {error}") from None
    unknown = sorted(set(data) - _THEME_FIELDS)
    if unknown:
        raise ThemeError(f"{path}: unknown theme keys {', '.join(unknown)}")
    data.setdefault("name", path.stem)
    try:
        theme = Theme(**data)
        # Colours are only parsed when a theme is switched to: do it now, so a
        # typo is reported at start instead of failing on the first ``t``.
        theme.to_color_system().generate()
        for name, value in theme.variables.items():
            if "style" not in name:  # *-text-style variables hold "bold", "none"…
                Color.parse(value)
    except TypeError as error:  # a required field (primary) is missing
        raise ThemeError(f"{path}: {error}") from None
    except (ColorParseError, ValueError, AttributeError) as error:  # a colour that is not one
        raise ThemeError(f"{path}: {error}") from None
    return theme


def load_themes(directory: Path | None = None) -> list[Theme]:
    """Every ``*.toml`` theme in ``directory`` (default: :func:`themes_dir`), by file name."""
    folder = themes_dir() if directory is None else directory
    return [load_theme(path) for path in sorted(folder.glob("*.toml"))]


def shipped_themes() -> list[Theme]:
    """The themes that come with rlwatch, the default first (``t`` starts from it)."""
    return sorted(load_themes(), key=lambda theme: theme.name != DEFAULT_THEME)


def user_themes_dir() -> Path:
    """Where a user drops theme files of their own."""
    return config_dir() / "themes"


@dataclasses.dataclass(frozen=True)
class ThemeSet:
    """The themes to offer, in cycling order, and why each unusable user theme file was skipped."""

    themes: list[Theme]
    # File stem (the name ``--theme`` would use) -> one line saying what is wrong.
    broken: dict[str, str]

    @property
    def names(self) -> list[str]:
        return [theme.name for theme in self.themes]


def available_themes(user_dir: Path | None = None) -> ThemeSet:
    """The shipped themes, then the user's (default: :func:`user_themes_dir`).

    A user theme with a shipped theme's name replaces it in place, so a copy
    of ``rlwatch-dark.toml`` with one colour changed is the new default.
    """
    themes = {theme.name: theme for theme in shipped_themes()}
    broken = {}
    folder = user_themes_dir() if user_dir is None else user_dir
    try:
        paths = sorted(folder.glob("*.toml"))
    except OSError as error:
        paths, broken[""] = [], f"{folder}: {error.strerror or error}"
    for path in paths:
        try:
            theme = load_theme(path)
        except ThemeError as error:
            broken[path.stem] = f"theme skipped: {error}"
            continue
        themes[theme.name] = theme
    return ThemeSet(list(themes.values()), broken)
