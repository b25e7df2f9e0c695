"""One sample as a readable card: prompt, response, ground truth, score and extra fields.

Used for the ``[prompt]``/``[response]`` blocks a reward manager printed into
the log and for the rows of a rollout or validation dump alike. Every field
is model or user text: it is drawn literally, never as markup, and passed
through ``safe_text`` first, so an escape sequence in it is shown, not obeyed.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from tui.parsers.records import Sample
from tui.parsers.text import safe_text
from tui.ui.format import format_exact

# A card shows this much of one field; the log view and the dump file have the rest.
FIELD_CHARS = 4000


def _field(name: str, text: str) -> Content:
    text = safe_text(text, multiline=True, tabsize=4)
    shown = text if len(text) <= FIELD_CHARS else f"{text[:FIELD_CHARS]}… ({len(text):,} characters)"
    return Content.assemble((name, "bold $accent"), "\n", shown or Content.styled("(empty)",
                                                                                   "$text-muted"))


def sample_content(sample: Sample) -> Content:
    """The card's text: each field under its name, the score and extras on one line each."""
    parts = [_field("prompt", sample.prompt), _field("response", sample.response)]
    if sample.ground_truth:
        parts.append(_field("ground truth", sample.ground_truth))
    score = "—" if sample.score is None else format_exact(sample.score)
    facts = [Content.assemble(("score ", "bold $accent"), (score, "bold"))]
    facts += [Content.assemble((f"{safe_text(key)} ", "bold $accent"), safe_text(value[:200]))
              for key, value in sample.extra.items()]
    parts.append(Content("   ").join(facts))
    return Content("\n\n").join(parts)


class SampleCard(Static):
    """A bordered card for one sample; ``show`` swaps the sample in place."""

    DEFAULT_CSS = """
    SampleCard {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border: round $secondary 60%;
        border-title-color: $text;
    }
    """

    def __init__(self, sample: Sample | None = None, title: str = "sample") -> None:
        super().__init__()
        self.border_title = Content(safe_text(title))
        if sample is not None:
            self.show(sample)

    def show(self, sample: Sample, title: str | None = None) -> None:
        """Draw ``sample``; ``title`` (literal) replaces the border title when given."""
        if title is not None:
            self.border_title = Content(safe_text(title))
        self.update(sample_content(sample))
