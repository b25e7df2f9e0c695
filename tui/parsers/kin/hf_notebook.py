"""The HF Trainer's notebook output as users paste it from Jupyter or Colab (Unsloth's GRPO
notebooks above all): a progress line and a table with one row per logged step.

Grammar (GRAMMAR.md, "hf-notebook-table"), from transformers' ``utils/notebook.py``
(``NotebookProgressCallback``, ``NotebookProgressBar.update_bar``, ``text_to_html_table``)
and real pastes (unsloth 2291; notebooks' committed output):

* the progress line, the text of the HTML bar: ``[ 50/250 12:34 < 50:00, 0.07 it/s,
  Epoch 0.20/1]`` while training (the count right-aligned to the total's width; ``s/it``
  never: the rate is always ``it/s``, ``+inf it/s`` before the first timing), ``[ 1/250
  : < :, Epoch 0/1]`` before it, ``[250/250 1:02:03, Epoch 1/1]`` at the end (no
  remaining time). The ``Epoch`` comment tells the training bar from an evaluation bar;
* the table: a header row ``Step | Training Loss | reward | …`` (the first column is
  ``Step``; ``Epoch`` when evaluating per epoch, which counts no steps), its cells
  separated by TABs (a copy of the rendered table), `` | `` (GitHub's conversion of such a
  copy, with a ``-- | --`` row under the header) or Markdown pipes (``| Step | … |`` and
  ``|------|:---:|``); then one row per logged step, the step first, every float written
  ``%.6f``, a metric not logged at that step ``No Log``. The header names the columns:
  ``Training Loss`` is the logs' ``loss``, and Unsloth writes a ``/`` of a key as `` / ``
  (``completions / mean_length``), put back here so the names are TRL's own.

The rows carry no needle: the header opens the table and the scanner hands the grammar
the lines that follow until one is not a row (``row``). Such tables exist only in pasted
notebook output (a terminal run prints the Trainer's dicts), which is read as a file.
"""

from __future__ import annotations

import re

from tui.parsers.kin.values import kin_value
from tui.parsers.records import ProgressRecord, Record, StepRecord
from tui.parsers.tqdm_progress import parse_duration

NEEDLES: tuple[bytes, ...] = (b"Training Loss", b", Epoch ")

_PROGRESS = re.compile(
    r"\[\s*(?P<n>\d+)/(?P<total>\d+) (?:: < :|(?P<elapsed>[\d:]+)(?: < (?P<eta>[\d:]+))?"
    r"(?:, (?P<rate>[\d.]+|\+inf) it/s)?), (?P<epoch>Epoch [\d.]+/[\d.]+)\]")
_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
_STEP = re.compile(r"\d+")
_NOT_LOGGED = "No Log"
_NAMES = {"Training Loss": "loss", "Validation Loss": "eval_loss"}


def _cells(line: str) -> list[str] | None:
    """A table line's cells (TAB or pipe separated), or None for a line of one cell."""
    text = line.strip()
    if "\t" in text:
        cells = text.split("\t")
    elif "|" in text:
        cells = text.strip("|").split("|")
    else:
        return None
    return [cell.strip() for cell in cells]


def _key(name: str) -> str:
    return _NAMES.get(name, name.replace(" / ", "/"))


class HfNotebookLines:
    """The notebook table's header (which keys its columns are) and the progress line."""

    def __init__(self) -> None:
        self._columns: list[str] | None = None  # while a table is open

    @property
    def table_open(self) -> bool:
        """A header was read and the rows after it are wanted (``row``)."""
        return self._columns is not None

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        if "Training Loss" in segment:
            cells = _cells(segment)
            if cells is not None and cells[0] == "Step" and "Training Loss" in cells:
                self._columns = [_key(cell) for cell in cells]
                return []
            return None
        if ", Epoch " in segment:
            progress = _PROGRESS.search(segment)
            if progress is not None:
                return [_progress(progress, offset)]
        return None

    def row(self, line: str, offset: int, end: int) -> list[Record] | None:
        """A line after the header: its step's metrics ([] for a separator row), or None
        where it is no row and the table ends."""
        columns = self._columns
        if columns is None:
            return None
        cells = _cells(line)
        if cells is None or len(cells) > len(columns):
            self._columns = None
            return None
        if _SEPARATOR.match(line.strip()):
            return []
        if not _STEP.fullmatch(cells[0]):
            self._columns = None
            return None
        if len(cells) < len(columns):
            cells.pop()  # a row cut short (a paste's end): its last cell may have lost digits
        metrics: dict[str, float] = {}
        for key, cell in zip(columns[1:], cells[1:]):
            value = kin_value(cell) if cell != _NOT_LOGGED else None
            if value is not None:
                metrics[key] = value
        return [StepRecord(int(cells[0]), metrics, offset, end)] if metrics else []


def _progress(match: re.Match[str], offset: int) -> ProgressRecord:
    n, total = int(match.group("n")), int(match.group("total"))
    rate = match.group("rate")
    per_item = 1 / float(rate) if rate and rate != "+inf" and float(rate) > 0 else None
    elapsed, eta = match.group("elapsed"), match.group("eta")
    return ProgressRecord(desc=match.group("epoch"), n=n, total=total,
                          elapsed_s=parse_duration(elapsed) if elapsed else None,
                          eta_s=parse_duration(eta) if eta else (0.0 if n == total else None),
                          sec_per_it=per_item, offset=offset, training=True)
