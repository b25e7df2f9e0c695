"""verl's kin: the console grammars of the other RL fine-tuning trainers.

One module per trainer family, each a small state machine over the lines the
scanner hands it (only lines holding one of ``NEEDLES``, locally and after a
remote grep alike, so no grammar may need a line without a needle):

* ``hf_trainer`` — TRL, ms-swift, LlamaFactory: the HF Trainer's metric dicts
  (Python or JSON), its bar, its ``train_runtime`` end;
* ``slime`` — slime and Miles: ``perf N: {…}``, ``rollout N: {…}``, ``step N: {…}``;
* ``nemo_rl`` — NeMo-RL's ``Step N/M`` banners and ``• name: value`` bullets;
* ``easyr1`` — EasyR1's ``Step N`` + YAML blocks (and its early ``step N: -`` lines);
* ``openrlhf`` — OpenRLHF's ``Train epoch`` bar postfix and ``Global step N: {…}``;
* ``skyrl`` — SkyRL's pretty-printed step dict and reward line;
* ``megatron`` — Megatron-LM's ``iteration N/M | key: value |`` line (Megatron-SWIFT);
* ``hf_notebook`` — the HF Trainer's notebook table and progress line, pasted from Jupyter;
* ``prime_rl`` — prime-rl's orchestrator and trainer ``Step N | Name: value | …`` lines;
* ``wandb_summary`` — wandb's ``Run summary:``, the last values of a run that
  printed no others.

``KinLines`` dispatches a line to the grammars and keeps what they share: the
highest step reported, and whether any grammar (verl's included, which the
scanner reads itself and tells about) reported one.
"""

from __future__ import annotations

from tui.parsers.kin import (
    easyr1,
    hf_notebook,
    hf_trainer,
    megatron,
    nemo_rl,
    openrlhf,
    prime_rl,
    skyrl,
    slime,
    wandb_summary,
)
from tui.parsers.records import ProgressRecord, Record, StepRecord
from tui.parsers.tqdm_progress import training_position

NEEDLES: tuple[bytes, ...] = tuple(dict.fromkeys(
    hf_trainer.NEEDLES + slime.NEEDLES + nemo_rl.NEEDLES + easyr1.NEEDLES + openrlhf.NEEDLES
    + skyrl.NEEDLES + megatron.NEEDLES + hf_notebook.NEEDLES + prime_rl.NEEDLES
    + wandb_summary.NEEDLES))


def follows_bar(segment: str) -> bool:
    """True when text after a tqdm bar may still be a kin line (a dict glued to the bar)."""
    return "{" in segment


class KinLines:
    """The kin grammars' state for one log, fed its lines in order."""

    def __init__(self) -> None:
        self._hf = hf_trainer.HfTrainerLines()
        self._slime = slime.SlimeLines()
        self._nemo = nemo_rl.NemoRlLines()
        self._easyr1 = easyr1.EasyR1Lines()
        self._openrlhf = openrlhf.OpenRlhfLines()
        self._skyrl = skyrl.SkyRlLines()
        self._megatron = megatron.MegatronLines()
        self._notebook = hf_notebook.HfNotebookLines()
        self._prime = prime_rl.PrimeRlLines()
        self._wandb = wandb_summary.WandbSummaryLines()
        self._last_step: int | None = None
        self._bar_step: int | None = None
        self._any_steps = False

    def saw_step(self, step: int) -> None:
        """A step the scanner read itself (verl's grammar)."""
        self._any_steps = True
        self._note(step)

    def begin_line(self, text: str) -> None:
        """A physical line, raw (before ANSI, ``\r`` and prefixes are taken out), before
        its segments are handed over: what only its raw form shows (tqdm's clears)."""
        self._hf.begin_line(text)

    def on_bar(self, bar: ProgressRecord, segment: str) -> list[Record]:
        """A tqdm bar the scanner parsed: the bar (maybe marked as the run's), and any
        metrics its postfix carries."""
        bar, released = self._hf.on_bar(bar)
        bar, postfix = self._openrlhf.on_bar(bar, segment)
        self._skyrl.on_bar(bar)
        position = training_position(bar)
        if position is not None:
            self._bar_step = position[0]
        return [bar, *self._tally(released), *self._tally(postfix)]

    def parse(self, segment: str, offset: int, end: int) -> list[Record]:
        """Records of one cleaned line segment that no verl grammar took."""
        summary = self._wandb.parse(segment, offset, end, self._known_step(), self._any_steps)
        if summary is not None and segment.lstrip().startswith("wandb:"):
            return self._tally(summary)
        before = summary or []
        for grammar in (self._hf, self._slime, self._nemo, self._easyr1, self._openrlhf, self._skyrl,
                        self._megatron, self._notebook, self._prime):
            records = grammar.parse(segment, offset, end)
            if records is not None:
                return before + self._tally(records)
        return before

    @property
    def table_open(self) -> bool:
        """A notebook table's header was read: the lines after it are its rows (``table_row``)."""
        return self._notebook.table_open

    def table_row(self, line: str, offset: int, end: int) -> list[Record] | None:
        """A line after a notebook table's header (needle or not): its records, or None where
        the table has ended."""
        records = self._notebook.row(line, offset, end)
        return None if records is None else self._tally(records)

    def settle(self) -> list[Record]:
        """The writer has paused: the dicts a grammar holds only for more text to come."""
        return self._tally(self._hf.settle())

    def finish(self) -> list[Record]:
        """What the grammars still hold at the end of the log."""
        records = self._tally(self._hf.finish())
        return records + self._tally(self._wandb.finish(self._known_step(), self._any_steps))

    def _known_step(self) -> int | None:
        known = [s for s in (self._last_step, self._bar_step) if s is not None]
        return max(known) if known else None

    def _tally(self, records: list[Record]) -> list[Record]:
        for record in records:
            if isinstance(record, StepRecord):
                self._any_steps = True
                self._note(record.step)
        return records

    def _note(self, step: int) -> None:
        if self._last_step is None or step > self._last_step:
            self._last_step = step
