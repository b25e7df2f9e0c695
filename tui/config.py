"""The user's settings file, ``~/.config/rlwatch/config.toml`` (platformdirs' user config dir).

Three keys are read::

    theme = "rlwatch-light"   # the theme to start in; the app writes it when you switch (t)
    ascii = true              # draw with ASCII only (the default follows the locale)
    notify = ["ntfy://my-runs"]  # Apprise URLs the headless watcher tells (with --notify's)

The app rewrites the file when the theme changes, keeping every other key;
comments are not kept. A file that cannot be read is reported and ignored:
settings must never stop the dashboard from starting.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tui.regular_file import NotUtf8, read_utf8

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def config_dir() -> Path:
    """Where rlwatch's user files live (``config.toml``, ``rules.toml``, ``themes/``)."""
    from platformdirs import user_config_path

    return user_config_path("rlwatch")


@dataclass
class Config:
    """What the settings file says, and the one problem reading it had, if any."""

    theme: str | None = None
    ascii: bool | None = None
    notify: list[str] = field(default_factory=list)
    problem: str | None = None
    data: dict = field(default_factory=dict, repr=False)


def load_config(path: Path | None = None) -> Config:
    """The settings in ``path`` (default: ``config.toml`` in :func:`config_dir`)."""
    path = config_dir() / "config.toml" if path is None else path
    try:
        data = tomllib.loads(read_utf8(path))  # never a FIFO or a device: those would hang
    except FileNotFoundError:
        return Config()
    except OSError as error:
        return Config(problem=f"{path}: {error.strerror or error}; settings ignored")
    except (NotUtf8, tomllib.TOMLDecodeError) as error:
        return Config(problem=f"{path}: {error}; settings ignored")
    theme, ascii_only = data.get("theme"), data.get("ascii")
    if theme is not None and not isinstance(theme, str):
        return Config(problem=f"{path}: theme must be a name in quotes; settings ignored")
    if ascii_only is not None and not isinstance(ascii_only, bool):
        return Config(problem=f"{path}: ascii must be true or false; settings ignored")
    notify = data.get("notify", [])
    if not isinstance(notify, list) or not all(isinstance(url, str) for url in notify):
        return Config(problem=f"{path}: notify must be a list of Apprise URLs in quotes; settings ignored")
    return Config(theme, ascii_only, notify, data=data)


def save_theme(name: str, path: Path | None = None) -> str | None:
    """Remember ``name`` as the theme to start in; returns a problem to show, or None."""
    path = config_dir() / "config.toml" if path is None else path
    config = load_config(path)
    if config.problem:
        return f"theme not remembered: {config.problem}"
    try:
        text = to_toml({**config.data, "theme": name})
    except (TypeError, ValueError) as error:
        return f"theme not remembered: {path}: {error}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)  # a reader never sees half a file
    except OSError as error:
        return f"theme not remembered: {path}: {error.strerror or error}"
    return None


def to_toml(data: dict) -> str:
    """Top-level keys, then one level of tables, of strings, numbers, booleans and lists of them.

    That is all the settings file holds; JSON's spelling of those values is
    valid TOML. Anything else raises TypeError rather than being written wrong.
    """
    scalars = [f"{_key(key)} = {_value(value)}" for key, value in data.items()
               if not isinstance(value, dict)]
    tables = [f"\n[{_key(key)}]\n" + "".join(f"{_key(inner)} = {_value(item)}\n"
                                            for inner, item in value.items())
              for key, value in data.items() if isinstance(value, dict)]
    return "\n".join(scalars) + "\n" + "".join(tables)


_SCALARS = (str, bool, int, float)


def _key(key: str) -> str:
    bare = key.replace("-", "").replace("_", "")
    return key if bare.isascii() and bare.isalnum() else json.dumps(key)


def _value(value: object) -> str:
    if isinstance(value, _SCALARS) or (isinstance(value, list)
                                       and all(isinstance(item, _SCALARS) for item in value)):
        return json.dumps(value, allow_nan=False)
    raise TypeError(f"cannot write {type(value).__name__} values")
