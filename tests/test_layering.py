"""The core layers stay free of UI and network libraries (DESIGN.md's one-way flow).

Checked in a fresh interpreter, as harlequin does: importing the parsers, the
model, the rules and the local sources must not pull in Textual or asyncssh.
"""

from tests.support import packages_loaded_by

CORE = ["tui.parsers.log_scanner", "tui.parsers.samples", "tui.parsers.verl_jsonl",
        "tui.model.run_model", "tui.model.merge", "tui.session.feed", "tui.session.logger_feeds",
        "tui.rules.engine", "tui.report.verdict", "tui.sources.local_file", "tui.sources.discovery"]


def test_core_imports_neither_textual_nor_asyncssh():
    code = f"import importlib\nfor name in {CORE!r}: importlib.import_module(name)"
    assert packages_loaded_by(code, {"textual", "asyncssh", "rich", "tensorboard", "plotext"}) == []
