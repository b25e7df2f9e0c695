"""The HF Trainer family's metric dicts: TRL, ms-swift, LlamaFactory and whatever rides on
``transformers.Trainer``.

Grammar (GRAMMAR.md, "hf-dict"): the Trainer's ``ProgressCallback`` writes
``str(logs)`` under its tqdm bar at every logging step, so a line holds a Python
dict, alone or glued to a bar redraw (``| 10/50 [00:17<01:06,  1.67s/it]{'loss': …}``);
``PrinterCallback`` (no bar) prints the same dict; ms-swift also writes the dict as
a JSON line (``logging.jsonl``, and some users tee that). Values are numbers,
``nan``/``inf``, or (transformers >= 4.57, ms-swift with it) quoted numbers
(``'loss': '0.3713'``). A dict counts as metrics when its ``loss`` is a number
or it has TRL's PPO/RLOO keys (``objective/kl``, ``loss/policy_avg``: no plain
``loss``); ``{'eval_…`` dicts are validation at the current step;
``{'train_runtime': …}`` (and the ``***** train metrics *****`` header of the
block ``trainer.log_metrics`` prints) is the Trainer's own end of training.

The step: ms-swift's ``global_step/max_steps: 'N/M'``, LlamaFactory's
``current_steps``/``total_steps``; otherwise (TRL) the HF bar's count when the
dicts follow its ticks, or the dicts in order when a buffered stdout makes
them arrive in bursts (``_Numbering``).

The HF bar has no description. The first metric dict locks the run bar's total
to the description-less bar drawn last before it; from then on bars of that total
are the run's progress (``training``), while evaluation bars (other totals) are
not. A bar printed without its ``%|███|`` part (``  4% 100/2238 [1:49:59<42:08:58,
70.97s/it]``, or no percentage at all: tqdm with ``ncols=0``) is read here too.

A dict whose closing brace is missing was cut or wrapped: when the next line is
adjacent and starts with the rest (``p/max_steps': '33/94', …}``) the two are
joined; otherwise an unquoted value that runs into the cut is dropped (it may
have lost digits) and the rest kept.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque

from tui.parsers.kin.dict_literal import PrintedDict, printed_dicts, read_items
from tui.parsers.kin.values import kin_value
from tui.parsers.records import ProgressRecord, Record, RunEndRecord, StepRecord, TotalStepsRecord
from tui.parsers.text import strip_ansi, strip_ray_prefix
from tui.parsers.tqdm_progress import parse_bar, parse_duration

# Lines this grammar needs; the scanner passes only lines holding one of them.
NEEDLES: tuple[bytes, ...] = (
    b"'loss':",          # every train dict but TRL's PPO/RLOO (and the scanner's old needle)
    b'"loss": ',         # the same dict as a JSON line
    b"'objective/",      # TRL PPOTrainer / RLOOTrainer dicts
    b"{'eval_",          # the Trainer's evaluation dict
    b"'train_runtime'",  # the Trainer's end of training: its last dict,
    b'"train_runtime"',  # as JSON,
    b"train metrics *****",  # and log_metrics' ``***** train metrics *****`` block
    b"s/it]",            # a bar printed without its |███| part (RL steps take seconds:
)                        # a faster bar's "it/s]" is left to the dict glued to it)

_STEP_OF_TOTAL = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
_TRL_PPO_PREFIXES = ("objective/", "loss/policy", "policy/")
# ``  4% 100/2238 [1:49:59<42:08:58, 70.97s/it]`` and ``100/2238 [01:49<42:08, 70.97s/it]``.
_BARE_BAR = re.compile(
    r"(?:(?<![\w.])(?P<pct>\d{1,3})%\s+)?(?<![\w./])(?P<n>\d+)/(?P<total>\d+)\s+"
    r"\[(?P<elapsed>[\d:]+)<(?P<eta>[\d:?]+),\s*(?P<rate>[\d.]+|\?)\s*(?P<unit>s/it|it/s)\]"
)
# A held dict is joined to the next line only if that line is this close.
_MAX_HELD_CHARS = 1 << 16
# Bar redraws remembered while the dicts they mark are still in a stdout buffer.
_MAX_WRITES = 1 << 16


class HfTrainerLines:
    """Reads HF-Trainer-style dict lines; keeps the bar lock and the numbering."""

    def __init__(self) -> None:
        self._locked_total: int | None = None
        self._last_free_bar: ProgressRecord | None = None
        self._numbering = _Numbering()
        # An unclosed dict waiting for its wrapped continuation: (text, offset, end).
        self._held: tuple[str, int, int] | None = None
        self._redraws = ClearedRedraws()
        # The run bar drawn before the lock was taken, still to be reported.
        self._pending_progress: ProgressRecord | None = None

    # -- bars ---------------------------------------------------------------

    def on_bar(self, bar: ProgressRecord) -> tuple[ProgressRecord, list[Record]]:
        """A bar the scanner parsed, marked ``training`` when it is the run bar, and
        the dicts its tick lets the numbering decide on."""
        if bar.desc == "Train":  # ms-swift names its run bar (tqdm_progress knows it)
            return bar, []
        if bar.desc or bar.total is None:
            return bar, []
        if self._locked_total is None or bar.total == self._locked_total:
            released = self._numbering.tick(bar.n)
        else:
            released = []  # an evaluation bar
        self._last_free_bar = bar
        if self._locked_total is not None and bar.total == self._locked_total:
            bar = dataclasses.replace(bar, training=True)
        return bar, released

    def begin_line(self, text: str) -> None:
        """A physical line, before its segments: the run-bar redraws after a clear in it."""
        for n, total in self._redraws.feed(text):
            if self._locked_total is None or total == self._locked_total:
                self._numbering.written(n)

    def bare_bars(self, segment: str, offset: int) -> list[Record]:
        """Bars without ``%|`` in ``segment`` (the scanner's bar parser needs the pipe)."""
        if "%|" in segment or "/it]" not in segment and "it/s]" not in segment:
            return []
        out: list[Record] = []
        for match in _BARE_BAR.finditer(segment[:4096]):
            rate, unit = match.group("rate"), match.group("unit")
            sec_per_it = None
            if rate != "?" and float(rate) > 0:
                sec_per_it = float(rate) if unit == "s/it" else 1.0 / float(rate)
            # The text since the previous bar's ``]``: a description such as ``Map:`` if any.
            desc = segment[:match.start()].rsplit("]", 1)[-1].strip().rstrip(":").strip()
            bar = ProgressRecord(desc=desc, n=int(match.group("n")), total=int(match.group("total")),
                                 elapsed_s=parse_duration(match.group("elapsed")),
                                 eta_s=parse_duration(match.group("eta")),
                                 sec_per_it=sec_per_it, offset=offset)
            marked, released = self.on_bar(bar)
            out += [marked, *released]
        return out

    # -- dict lines ---------------------------------------------------------

    def parse(self, segment: str, offset: int, end: int) -> list[Record] | None:
        """Records of a dict line, or None when ``segment`` is not this grammar's."""
        records: list[Record] = list(self.bare_bars(segment, offset))
        held = self._held
        self._held = None
        lead, dicts = printed_dicts(segment)
        if held is not None:
            text, held_offset, held_end = held
            if held_end == offset and "}" in lead and "{" not in lead:
                # The wrapped rest of the held dict: read the two rows as one.
                _, joined = printed_dicts(text + lead[: lead.index("}") + 1])
                if joined:
                    records += self._dict_records(joined[-1], held_offset, end)
            else:
                records += self._flush(text, held_offset, held_end)
        elif not dicts and ("'loss':" in lead or '"loss":' in lead):
            # A dict whose opening brace was lost (cut or pasted from the middle).
            items, _, closed = read_items(lead[lead.index("'loss':" if "'loss':" in lead else '"loss":'):],
                                          0, stop_at_close=False)
            dicts = [PrintedDict(items, 0, len(segment), closed)]
        mine = bool(records)
        for index, printed in enumerate(dicts):
            if not printed.closed and index == len(dicts) - 1 and printed.end - printed.start < _MAX_HELD_CHARS \
                    and _looks_like_trainer_dict(printed):
                self._held = (segment[printed.start:], offset, end)
                mine = True
                continue
            records += self._dict_records(printed, offset, end)
            # A trainer dict is this grammar's even while its step waits (``_Numbering``).
            mine = mine or _looks_like_trainer_dict(printed)
        if not dicts and "***** train metrics *****" in segment:
            records.append(RunEndRecord(offset))
            mine = True
        records += self.take_progress()
        return records if mine else None

    def settle(self) -> list[Record]:
        """The writer has paused: a held burst is numbered with the marks there are (the last
        burst of a run has no tick after it), and a dict held for its wrapped rest is read as
        cut, as ``finish`` reads it: a terminal's wrap comes in the same write as the row it
        wraps, so a pause says no rest is coming, and the dashboard following a log must count
        the steps ``check`` counts on the same bytes. A first dict still waits for its layout,
        unless it is that cut one: a writer that stops inside a dict has stopped (a killed
        run, a cut paste), so it is numbered as ``finish`` numbers it."""
        if self._held is None:
            return self._numbering.settle()
        text, offset, end = self._held
        self._held = None
        return self._flush(text, offset, end) + self._numbering.finish() + self.take_progress()

    def finish(self) -> list[Record]:
        """The held dict, if any, read as cut, and the dicts still waiting for their step."""
        records: list[Record] = []
        if self._held is not None:
            text, offset, end = self._held
            self._held = None
            records += self._flush(text, offset, end)
        # A dict read only now (cut at the log's end) may have locked the run's bar.
        return records + self._numbering.finish() + self.take_progress()

    def _flush(self, text: str, offset: int, end: int) -> list[Record]:
        _, dicts = printed_dicts(text)
        return self._dict_records(dicts[0], offset, end) if dicts else []

    def _dict_records(self, printed: PrintedDict, offset: int, end: int) -> list[Record]:
        items = [item for item in printed.items if not item.cut]
        dropped = len(printed.items) - len(items)  # a value at the cut may have lost digits
        metrics: dict[str, float] = {}
        strings: dict[str, str] = {}
        for item in items:
            value = kin_value(item.value)
            if value is None:
                if item.quoted:
                    strings[item.key] = item.value
                else:
                    dropped += 1
                continue
            metrics[item.key] = value
        keys = metrics.keys() | strings.keys()
        if "train_runtime" in keys:
            return self._end_records(metrics, strings, offset)
        is_train = "loss" in metrics or any(k.startswith(_TRL_PPO_PREFIXES) for k in metrics)
        is_eval = not is_train and any(k.startswith("eval_") for k in metrics)
        if not (is_train or is_eval) or (len(printed.items) < 2 and printed.closed):
            # One number alone is no trainer's dict; a null (LLaMA-Factory's JSON) beside
            # it, or a cut after it (the dict went on), still makes one.
            return []
        step, total = self._explicit_step(metrics, strings)
        for key in ("current_steps", "total_steps"):
            metrics.pop(key, None)
        records: list[Record] = [] if total is None else [TotalStepsRecord(total, offset)]
        if is_train:
            self._lock_bar()
        record = StepRecord(step if step is not None else 0, metrics, offset, end, dropped)
        if step is not None:
            return self._numbering.explicit(record) + records
        if is_train:
            return self._numbering.train(record, self._redraws.cleared) + records
        return self._numbering.evaluation(record) + records

    def _explicit_step(self, metrics: dict[str, float],
                       strings: dict[str, str]) -> tuple[int | None, int | None]:
        text = strings.get("global_step/max_steps")
        if text is not None:
            match = _STEP_OF_TOTAL.fullmatch(text)
            if match:
                return int(match.group(1)), int(match.group(2))
        if "current_steps" in metrics:
            total = metrics.get("total_steps")
            return int(metrics["current_steps"]), None if total is None else int(total)
        return None, None

    def _lock_bar(self) -> None:
        bar = self._last_free_bar
        if self._locked_total is None and bar is not None and bar.total:
            self._locked_total = bar.total
            self._pending_progress = dataclasses.replace(bar, training=True)
        elif self._locked_total is None and not self._numbering.has_bar():
            self._numbering.no_bar()

    def take_progress(self) -> list[ProgressRecord]:
        """The run bar found when the lock was taken (it was drawn before the lock)."""
        pending = self._pending_progress
        if pending is None:
            return []
        self._pending_progress = None
        return [pending]

    def _end_records(self, metrics: dict[str, float], strings: dict[str, str],
                     offset: int) -> list[Record]:
        records: list[Record] = [RunEndRecord(offset)]
        _, total = self._explicit_step(metrics, strings)
        if total is not None:
            records.append(TotalStepsRecord(total, offset))
        return records


class _Numbering:
    """Which step a dict without a step number is.

    The HF bar goes to stderr and ``tqdm.write`` puts the dict on stdout. When
    both reach the log unbuffered the dict follows the bar redraw of its own
    step (``…1.67s/it]\r   \r{'loss': …}``), so the bar's count is the step
    ("bar" numbering). When stdout is block-buffered (``| tee``, ``> log``
    without ``PYTHONUNBUFFERED``) the bar runs ahead and the dicts arrive later
    in bursts, several with no bar tick between them, a burst even glued to the
    bar line like an unbuffered dict; then the bar's count says nothing about
    them ("written" numbering). So the first dict waits for what comes next: a
    bar tick (the bar's count was its step) or another dict with no tick between
    (a burst). The same numbering then holds for the run.

    In the buffered layout the step each dict was written at is still in the
    log: ``tqdm.write`` clears the bar (``\r`` + spaces + ``\r``) and draws it
    again at the current count, on stderr and at once, so the count drawn right
    after a clear marks a write (``ClearedRedraws``). The k-th dict of the
    bursts is the k-th such count (``logging_steps=5`` gives 5, 10, …; a resumed
    run 16, 17, …); with no mark left, the dicts are numbered on in order.

    The marks come before their dicts, never after, so a burst holding more dicts
    than there are marks waiting began before the log did: a log rotated under a
    running trainer (logrotate's copytruncate), or read from the middle, opens on
    the bar and then flushes the dicts of steps whose marks are in the older file.
    A burst is therefore held until the bar moves on, and its dicts are matched to
    the marks from its end; those left over are the steps just before the first
    mark, at the marks' own spacing.

    Unbuffered, the bar before a dict's clear is its step only when the bar is
    redrawn at every tick: a fast one (faster than tqdm's 0.1 s ``mininterval``) may
    still show the previous write's mark or a tick or two short (LLaMA-Factory at
    ``logging_steps=3``: 3, 6, 9 behind 0/10, 3/10, 6/10). The dict's own mark is the
    redraw right after it, so a dict written after a clear is held for that mark.
    """

    def __init__(self) -> None:
        self.mode: str | None = None
        self._bar_n: int | None = None
        self._ticks = 0
        self._ticks_at_dict = -1
        self._last: int | None = None
        # Counts the bar was redrawn at after a clear: where tqdm.write printed something.
        self._writes: deque[int] = deque(maxlen=_MAX_WRITES)
        # Marks registered since the held burst's last dict (they follow it in the log).
        self._marks_after_burst = 0
        # The first dict (and evaluation dicts after it) until the mode is known.
        self._pending: list[tuple[StepRecord, bool, int | None]] = []
        # The held train dict came after a clear: its step is the redraw after it.
        self._awaits_mark = False

    def has_bar(self) -> bool:
        return self._bar_n is not None

    def no_bar(self) -> None:
        if self.mode is None:
            self.mode = "written"

    def written(self, n: int) -> None:
        """The bar was drawn at ``n`` right after a clear: something was written at step n."""
        if n > 0:
            self._writes.append(n)
            self._marks_after_burst += 1

    def tick(self, n: int) -> list[Record]:
        if n != self._bar_n:
            self._ticks += 1
        self._bar_n = n
        if self._pending and (self._ticks != self._ticks_at_dict
                              or self.mode == "bar" and self._awaits_mark and self._marks_after_burst):
            self.mode = self.mode or "bar"
            return self._release()
        return []

    def explicit(self, record: StepRecord) -> list[Record]:
        self._note(record.step)
        return [record]

    def train(self, record: StepRecord, cleared: bool) -> list[Record]:
        """A train dict; ``cleared`` when it was written after a clear of the bar, whose
        redraw (the dict's own mark) is still to come."""
        released: list[Record] = []
        if self._pending and self.mode is None:
            # Two dicts and no tick between: a burst; a tick between: the bar's count.
            self.mode = "written" if self._ticks == self._ticks_at_dict else "bar"
        if self._pending and (self.mode == "bar" or len(self._pending) >= _MAX_WRITES):
            released = self._release()
        if (self.mode != "bar" or cleared) and self._bar_n is not None:
            # The first dict until the layout is known; in a burst, the burst until the bar moves;
            # a dict after a clear until its own redraw (the mark tqdm.write draws after it).
            self._pending.append((record, True, self._bar_n))
            self._awaits_mark = cleared
            self._ticks_at_dict = self._ticks
            self._marks_after_burst = 0
            return released
        step = self._next(self._bar_n)
        self._ticks_at_dict = self._ticks
        return released + [self._numbered(record, step)]

    def evaluation(self, record: StepRecord) -> list[Record]:
        if self._pending:
            self._pending.append((record, False, None))
            return []
        step = self._last if self._last is not None else (self._bar_n or 0)
        return [self._numbered(record, step)]

    def settle(self) -> list[Record]:
        # A dict held for its redraw: the redraw is on a line not finished yet (the scanner reads
        # whole lines), maybe for a whole slow step: the bar's count is the best guess till then.
        held = self.mode == "written" or self.mode == "bar" and self._awaits_mark
        return self._release() if self._pending and held else []

    def finish(self) -> list[Record]:
        if not self._pending:
            return []
        self.mode = self.mode or "bar"
        return self._release()

    def _release(self) -> list[Record]:
        pending, self._pending = self._pending, []
        out: list[Record] = []
        trains = [bar_n for _, is_train, bar_n in pending if is_train]
        before = self._before_marks(len(trains), trains[-1] if trains else None)
        # The marks drawn after the burst belong to dicts still in the buffer: number the
        # burst as it would have been numbered when its last dict came.
        later = [self._writes.pop() for _ in range(min(self._marks_after_burst, len(self._writes)))
                 if self.mode == "written"]
        own = self._own_mark() if self._awaits_mark and len(trains) == 1 else None
        self._awaits_mark = False
        for record, is_train, bar_n in pending:
            if is_train:
                step = before.pop(0) if before else own or self._next(bar_n, fresh=True)
            else:
                step = self._last if self._last is not None else 0
            out.append(self._numbered(record, step))
        self._writes.extend(reversed(later))
        return out

    def _own_mark(self) -> int | None:
        """Unbuffered, the count tqdm.write redrew the bar at right after the held dict: the
        step it was written at (a fast bar's count before the dict may be an earlier one's)."""
        after = min(self._marks_after_burst, len(self._writes))
        if self.mode != "bar" or not after:
            return None
        mark = self._writes[len(self._writes) - after]
        return mark if mark >= (self._last or 0) + 1 else None

    def _before_marks(self, dicts: int, bar_n: int | None) -> list[int]:
        """Steps of the dicts of a held burst written before the first mark still waiting
        (none while the marks are as many as the dicts). A log whose first burst has no
        mark before it but marks after began inside the burst's stretch of steps: the
        burst ends at the count the bar had when it came."""
        if self.mode != "written" or not dicts:
            return []
        following = (self._last or 0) + 1
        after = min(self._marks_after_burst, len(self._writes))
        marks = sorted({written for written in list(self._writes)[:len(self._writes) - after]
                        if written >= following})
        if len(marks) + 1 >= dicts:
            # One dict more than marks is the dict of the clear it came in (its mark is the
            # redraw after it): unbuffered output, or a flush taking the dict being printed.
            return []
        if marks:
            spacing = marks[1] - marks[0] if len(marks) > 1 else 1
            first, early = marks[0], dicts - len(marks)
        elif self._last is None and after and bar_n:
            spacing, first, early = 1, bar_n + 1, dicts
        else:
            return []
        steps = [first - spacing * (early - i) for i in range(early)]
        return [step for step in steps if step >= following]

    def _next(self, bar_n: int | None, fresh: bool | None = None) -> int:
        following = (self._last or 0) + 1
        if self.mode == "written":
            while self._writes:
                written = self._writes.popleft()
                if written >= following:  # skips redraws of a step already given
                    return written
            return following
        if not bar_n:
            return following
        if fresh is None:
            fresh = self._ticks != self._ticks_at_dict
        return bar_n if fresh and bar_n >= following else following

    def _numbered(self, record: StepRecord, step: int) -> StepRecord:
        self._note(step)
        return StepRecord(step, record.metrics, record.offset, record.end, record.dropped)

    def _note(self, step: int) -> None:
        if self._last is None or step > self._last:
            self._last = step


class ClearedRedraws:
    """Finds the bar counts drawn right after tqdm's clear, across physical lines.

    ``tqdm.write`` clears the bar (``\\r`` + spaces + ``\\r``), writes, and draws
    the bar again. The redraw follows the clear on the same line, or, when a
    flushed burst of buffered dicts landed right after the clear, at the start of
    the next line with a bar.
    """

    def __init__(self) -> None:
        self._open = False  # a clear seen, its redraw not yet

    @property
    def cleared(self) -> bool:
        """The bar was cleared and not drawn again yet: what follows is a write whose mark
        (the redraw) is still to come."""
        return self._open

    def feed(self, text: str) -> list[tuple[int, int | None]]:
        if "\r" not in text:
            return []
        out = []
        for part in text.split("\r"):
            if not part:
                continue
            if not part.strip():
                self._open = True
                continue
            if not self._open or "%|" not in part:
                continue  # text (a flushed dict) after the clear: the redraw comes later
            bar = parse_bar(strip_ray_prefix(strip_ansi(part)), 0)
            if bar is not None:
                self._open = False
                if not bar.desc:
                    out.append((bar.n, bar.total))
        return out


def _looks_like_trainer_dict(printed: PrintedDict) -> bool:
    keys = {item.key for item in printed.items}
    return "loss" in keys or "train_runtime" in keys or any(
        k.startswith(_TRL_PPO_PREFIXES) or k.startswith("eval_") for k in keys)


def read_fragment_items(text: str) -> dict[str, float]:
    """Numeric items of a dict fragment with no braces (a pretty-printed middle line)."""
    items, _, _ = read_items(text.strip(), 0, stop_at_close=False)
    out = {}
    for item in items:
        value = kin_value(item.value)
        if value is not None:
            out[item.key] = value
    return out
