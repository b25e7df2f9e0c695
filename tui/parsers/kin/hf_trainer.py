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
``{'train_runtime': …}`` (and the ``***** train metrics *****`` block's
``train_runtime = …`` row) is the Trainer's own end of training.

The step: ms-swift's ``global_step/max_steps: 'N/M'``, LlamaFactory's
``current_steps``/``total_steps``; otherwise the HF bar's position when it moved
since the previous dict (TRL); otherwise the dicts are numbered in order.

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

from tui.parsers.kin.dict_literal import PrintedDict, printed_dicts, read_items
from tui.parsers.kin.position import RunPosition
from tui.parsers.kin.values import kin_value
from tui.parsers.records import ProgressRecord, Record, RunEndRecord, StepRecord, TotalStepsRecord
from tui.parsers.tqdm_progress import parse_duration

# Lines this grammar needs; the scanner passes only lines holding one of them.
NEEDLES: tuple[bytes, ...] = (
    b"'loss':",          # every train dict but TRL's PPO/RLOO (and the scanner's old needle)
    b'"loss": ',         # the same dict as a JSON line
    b"'objective/",      # TRL PPOTrainer / RLOOTrainer dicts
    b"{'eval_",          # the Trainer's evaluation dict
    b"train_runtime",    # the Trainer's end of training, dict or log_metrics block
    b"s/it]",            # a bar printed without its |███| part
    b"it/s]",
)

_STEP_OF_TOTAL = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
_TRL_PPO_PREFIXES = ("objective/", "loss/policy", "policy/")
# ``  4% 100/2238 [1:49:59<42:08:58, 70.97s/it]`` and ``100/2238 [01:49<42:08, 70.97s/it]``.
_BARE_BAR = re.compile(
    r"(?:(?<![\w.])(?P<pct>\d{1,3})%\s+)?(?<![\w./])(?P<n>\d+)/(?P<total>\d+)\s+"
    r"\[(?P<elapsed>[\d:]+)<(?P<eta>[\d:?]+),\s*(?P<rate>[\d.]+|\?)\s*(?P<unit>s/it|it/s)\]"
)
# A held dict is joined to the next line only if that line is this close.
_MAX_HELD_CHARS = 1 << 16


class HfTrainerLines:
    """Reads HF-Trainer-style dict lines; keeps the bar lock and the numbering."""

    def __init__(self, position: RunPosition) -> None:
        self._position = position
        self._locked_total: int | None = None
        self._last_free_bar: ProgressRecord | None = None
        self._ticks_at_last_dict = -1
        self._last_step: int | None = None
        # An unclosed dict waiting for its wrapped continuation: (text, offset, end).
        self._held: tuple[str, int, int] | None = None
        # The run bar drawn before the lock was taken, still to be reported.
        self._pending_progress: ProgressRecord | None = None

    # -- bars ---------------------------------------------------------------

    def on_bar(self, bar: ProgressRecord) -> ProgressRecord:
        """A bar the scanner parsed; returned marked ``training`` when it is the run bar."""
        if bar.desc == "Train" and bar.total is not None:  # ms-swift names its run bar
            self._position.bar(bar.n, bar.total)
            return bar
        if bar.desc or bar.total is None:
            return bar
        self._last_free_bar = bar
        if self._locked_total is not None and bar.total == self._locked_total:
            self._position.bar(bar.n, bar.total)
            return dataclasses.replace(bar, training=True)
        return bar

    def bare_bars(self, segment: str, offset: int) -> list[ProgressRecord]:
        """Bars without ``%|`` in ``segment`` (the scanner's bar parser needs the pipe)."""
        if "%|" in segment or ("s/it]" not in segment and "it/s]" not in segment):
            return []
        out = []
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
            out.append(self.on_bar(bar))
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
            found = self._dict_records(printed, offset, end)
            mine = mine or bool(found)
            records += found
        if not dicts and "train_runtime" in segment:
            records.append(RunEndRecord(offset))  # ``***** train metrics *****`` rows
            mine = True
        records += self.take_progress()
        return records if mine else None

    def finish(self) -> list[Record]:
        """The held dict, if any, read as cut."""
        if self._held is None:
            return []
        text, offset, end = self._held
        self._held = None
        return self._flush(text, offset, end)

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
        if not (is_train or is_eval) or len(metrics) < 2:
            return []
        step, total = self._explicit_step(metrics, strings)
        if step is None:
            step = self._implicit_step(is_train)
        for key in ("current_steps", "total_steps"):
            metrics.pop(key, None)
        if is_train:
            self._lock_bar()
            self._ticks_at_last_dict = self._position.ticks
        if self._last_step is None or step > self._last_step:
            self._last_step = step
        self._position.reported(step)
        records: list[Record] = [StepRecord(step, metrics, offset, end, dropped)]
        if total is not None:
            records.append(TotalStepsRecord(total, offset))
        return records

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

    def _implicit_step(self, is_train: bool) -> int:
        done = self._position.done
        fresh = self._position.ticks != self._ticks_at_last_dict
        if not is_train:
            if self._last_step is not None:
                return self._last_step
            return done if done is not None else 0
        if done and (fresh or self._last_step is None) and (self._last_step is None or done > self._last_step):
            return done
        if self._locked_total is None and self._last_free_bar is not None and self._last_free_bar.n > 0 \
                and (self._last_step is None or self._last_free_bar.n > self._last_step):
            return self._last_free_bar.n
        return (self._last_step or 0) + 1

    def _lock_bar(self) -> None:
        bar = self._last_free_bar
        if self._locked_total is None and bar is not None and bar.total:
            self._locked_total = bar.total
            self._position.bar(bar.n, bar.total)
            self._pending_progress = dataclasses.replace(bar, training=True)

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
