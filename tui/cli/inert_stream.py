"""rlwatch's own stderr, made unable to drive the terminal.

Every diagnostic line may quote untrusted text: the log file the run
directory offered (a remote file name), a path, an SSH server's or smi
tool's error message. Rather than guard each ``print(..., file=sys.stderr)``,
``main`` puts this wrapper on ``sys.stderr`` once: whatever is written passes
through :func:`tui.parsers.text.safe_text`. Textual draws on
``sys.__stderr__``, which stays untouched, and so does stdout, whose outputs
each make their own text safe.

Each write is one line: a newline is kept only where it ends the write (``print``
writes its text, then the newline on its own), so a newline inside what is
printed (a file name holding one: ``run\nrlwatch: ok``) is shown as ``␊`` and
cannot fake a line of rlwatch's own. A multi-line message is written a line
at a time (argparse's usage: ``tui.cli.main``).
"""

from __future__ import annotations

from typing import Any, TextIO

from tui.parsers.text import safe_text


class InertStream:
    """A text stream that writes ``safe_text`` of everything to ``stream``."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        line, end = (text[:-1], "\n") if text.endswith("\n") else (text, "")
        self._stream.write(safe_text(line) + end)
        return len(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding…
        return getattr(self._stream, name)
