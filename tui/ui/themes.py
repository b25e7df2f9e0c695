"""Colour themes, kept as data in ``themes/*.toml`` so users can read and copy them.

An installed wheel carries the folder as ``tui/themes`` (pyproject's
force-include); an editable install reads the repository's top-level
``themes/`` directly, so a theme edited there shows up without reinstalling.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from textual.theme import Theme

import tui

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
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
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ThemeError(f"{path}: {error}") from None
    unknown = sorted(set(data) - _THEME_FIELDS)
    if unknown:
        raise ThemeError(f"{path}: unknown theme keys {', '.join(unknown)}")
    data.setdefault("name", path.stem)
    try:
        return Theme(**data)
    except TypeError as error:  # a required field (primary) is missing
        raise ThemeError(f"{path}: {error}") from None


def load_themes(directory: Path | None = None) -> list[Theme]:
    """Every ``*.toml`` theme in ``directory`` (default: :func:`themes_dir`), by file name."""
    folder = themes_dir() if directory is None else directory
    return [load_theme(path) for path in sorted(folder.glob("*.toml"))]
