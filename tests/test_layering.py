"""The layers below the UI load no UI library, and only the SSH source loads asyncssh.

import-linter (``lint-imports`` in .ci/run, contracts in pyproject.toml) reads the
import statements; this asks a fresh interpreter what importing every module of
those layers actually loads, as harlequin does. The modules are found by walking
the packages, so a module added tomorrow (a new trainer's parser) is checked too.
"""

import pkgutil
from importlib import import_module

from tests.support import packages_loaded_by

BELOW_THE_UI = ("tui.parsers", "tui.model", "tui.rules", "tui.report", "tui.session", "tui.sources")
UI_LIBRARIES = {"textual", "rich", "textual_plotext"}


def modules_under(package: str) -> list[str]:
    """``package`` and every module inside it, at any depth."""
    path = import_module(package).__path__
    return [package, *(found.name for found in pkgutil.walk_packages(path, prefix=f"{package}."))]


def importing(modules: list[str]) -> str:
    return f"import importlib\nfor name in {modules!r}: importlib.import_module(name)"


def test_the_walk_finds_every_module_of_a_layer():
    found = modules_under("tui.parsers")
    assert {"tui.parsers.log_scanner", "tui.parsers.smi.nvidia_query_csv", "tui.parsers.kin.hf_trainer"} <= set(found)


def test_no_module_below_the_ui_loads_textual_or_rich():
    modules = [name for package in BELOW_THE_UI for name in modules_under(package)]
    assert packages_loaded_by(importing(modules), UI_LIBRARIES) == []


def test_only_the_ssh_source_loads_asyncssh():
    modules = [name for package in BELOW_THE_UI for name in modules_under(package)
               if not name.startswith("tui.sources.ssh")]
    assert packages_loaded_by(importing(modules), {"asyncssh"}) == []
