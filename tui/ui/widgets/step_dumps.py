"""A step's rollout and validation dumps: score distribution, best and worst, and a reader.

verl writes ``{step}.jsonl`` into ``trainer.rollout_data_dir`` and
``trainer.validation_data_dir`` when they are set (VERL_FORMATS.md §6). The
samples are listed best first, so the worst are at the end (``end``), and
the one under the cursor is read in full below the list.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from pathlib import PurePath

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import DataTable, Static

from tui.parsers.records import Sample
from tui.parsers.rollout_dumps import parse_dump
from tui.parsers.text import safe_text
from tui.sources.base import SourceError
from tui.sources.run_folder import RunFolder
from tui.ui.format import format_number
from tui.ui.widgets.sample_card import SampleCard

HISTOGRAM_BINS = 8
BAR_CELLS = 30
SNIPPET_CHARS = 60


@dataclass(frozen=True, slots=True)
class StepDump:
    """One dump file of the step and its samples."""

    kind: str  # "rollout" or "validation"
    path: PurePath
    samples: list[Sample]


async def load_step_dumps(folder: RunFolder, step: int) -> list[StepDump]:
    """The step's dump files in the run's folder (here or on the box), read and parsed."""
    found = []
    for dump in await folder.dump_dirs():
        if step in dump.steps:
            path = dump.file_for(step)
            try:
                samples = await asyncio.to_thread(parse_dump, await folder.read(path))
            except (OSError, SourceError):
                continue  # removed or unreadable since the directory was listed
            found.append(StepDump("validation" if dump.validation else "rollout", path, samples))
    return found


def score_histogram(scores: list[float], bins: int = HISTOGRAM_BINS) -> list[tuple[str, int]]:
    """(label, count) per score: per distinct value when there are few (0/1 rewards),
    else per equal-width bin between the lowest and highest score."""
    finite = sorted(score for score in scores if math.isfinite(score))
    distinct = sorted(set(finite))
    if len(distinct) <= bins:
        return [(format_number(value), finite.count(value)) for value in distinct]
    low, high = finite[0], finite[-1]
    width = (high - low) / bins
    counts = [0] * bins
    for score in finite:
        counts[min(bins - 1, int((score - low) / width))] += 1
    return [(f"{format_number(low + i * width)}–{format_number(low + (i + 1) * width)}", count)
            for i, count in enumerate(counts)]


def _snippet(text: str) -> Text:
    """The text's start on one line, as a DataTable cell (rich Text: measured, never markup)."""
    line = safe_text(" ".join(text.split()))
    return Text(line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 1] + "…")


def _sort_key(sample: Sample) -> float:
    """Best first; samples without a finite score last."""
    score = sample.score
    return -score if score is not None and math.isfinite(score) else math.inf


def summary(dump: StepDump) -> Content:
    """A dump's counts and score statistics, and its histogram."""
    scores = [s.score for s in dump.samples if s.score is not None and math.isfinite(s.score)]
    head = Content.assemble((dump.kind, "bold"), f"  {len(dump.samples)} samples  ",
                            (safe_text(str(dump.path)), "$text-muted"))  # a (remote) file name
    if not scores:
        return Content.assemble(head, "\n", Content.styled("no scores", "$text-muted"))
    positive = sum(1 for score in scores if score > 0) / len(scores)
    stats = Content.assemble(
        ("score ", "$text-muted"), f"mean {format_number(math.fsum(scores) / len(scores))}  "
        f"min {format_number(min(scores))}  max {format_number(max(scores))}  "
        f"above 0: {positive:.0%}")
    rows = score_histogram(scores)
    most = max(count for _, count in rows) or 1
    width = max(len(label) for label, _ in rows)
    bars = [Content.assemble(label.rjust(width), " ",
                             ("█" * max(1 if count else 0, round(count / most * BAR_CELLS)),
                              "$primary"), f" {count}")
            for label, count in rows]
    return Content("\n").join([head, stats, *bars])


class SampleList(DataTable):
    """The samples, best first: home and end go to the best and the worst."""

    BINDINGS = [
        Binding("home", "scroll_top", "Best", show=False, tooltip="the best sample"),
        Binding("end", "scroll_bottom", "Worst", show=False, tooltip="the worst sample"),
    ]


class StepDumps(Vertical):
    """Summaries on top, the samples best first, and the highlighted one in full."""

    DEFAULT_CSS = """
    StepDumps { padding: 0 1; }
    StepDumps > #dump-summary { height: auto; margin-bottom: 1; }
    StepDumps > DataTable { height: auto; max-height: 12; }
    StepDumps > VerticalScroll { height: 1fr; margin-top: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.dumps: list[StepDump] = []

    def compose(self) -> ComposeResult:
        yield Static(Content("looking for rollout and validation dumps…"), id="dump-summary")
        yield SampleList(cursor_type="row", zebra_stripes=True)
        with VerticalScroll():
            yield SampleCard()

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("set", "score", "prompt", "response")

    async def show_step(self, folder: RunFolder | None, step: int) -> None:
        """Find and read ``step``'s dumps in the run's ``folder`` (None: the run has no place)."""
        table = self.query_one(DataTable)
        table.clear()
        text = self.query_one("#dump-summary", Static)
        try:
            self.dumps = [] if folder is None else await load_step_dumps(folder, step)
        except SourceError as error:
            text.update(Content(safe_text(f"The dumps could not be listed: {error}")))
            return
        self.query_one(VerticalScroll).display = bool(self.dumps)
        if not self.dumps:
            text.update(Content(
                "This step has no rollout or validation dump: set trainer.rollout_data_dir or "
                "trainer.validation_data_dir to have verl write them."
                if folder is not None else
                "This run has no directory to look in for dumps."))
            return
        text.update(Content("\n\n").join([*(summary(dump) for dump in self.dumps), Content.styled(
            "Samples best first (end: the worst); the highlighted one is shown in full below.",
            "$text-muted")]))
        for d, dump in enumerate(self.dumps):
            order = sorted(range(len(dump.samples)), key=lambda i: _sort_key(dump.samples[i]))
            for i in order:
                sample = dump.samples[i]
                score = "—" if sample.score is None else format_number(sample.score)
                table.add_row(dump.kind, score, _snippet(sample.prompt), _snippet(sample.response),
                              key=f"{d}:{i}")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is None:
            return
        d, i = map(int, event.row_key.value.split(":"))
        dump = self.dumps[d]
        title = f"{dump.kind} sample {i + 1} of {len(dump.samples)} in {dump.path.name}"
        self.query_one(SampleCard).show(dump.samples[i], title)
