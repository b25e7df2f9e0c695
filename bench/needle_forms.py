"""Which part of each needle the box's grep looks for, chosen by what grep spends on it.

    python bench/needle_forms.py [--logs DIR] [--sample-mb 16] [--measure-mb 128] [--tries 5]

GNU grep's search for many strings (``-E`` with literal alternatives: a DFA) runs a
one-byte-a-step loop while it stays in its start state and a slower one from every byte
that starts one of its strings until the text stops matching a prefix of one. So what a
set of strings costs is how often the text holds a prefix of one of them: ``s`` of
``step:`` (3% of seed 001's chatter), ``sub`` of ``submit_`` in every "subject". Strings
that start alike share that cost. A needle may be looked for by any part of it (the
scanner checks whole needles on the lines grep picks), so the tool picks one part per
needle so that the prefixes of all the parts are rare together:

1. References, each counted in bytes: seed 001's chatter and bench/make_log.py's log
   (``chatter_<MiB>.log`` and ``make_<MiB>.log`` in ``--logs``, built there by
   bench/check_vs_grep.py when missing), slices of ``--sample-mb`` from their middle, and
   the corpus logs (tests/fixtures/corpus/verl_logs) concatenated.
2. A part is a suffix of its needle from a character boundary, at least five bytes (or
   the whole needle: shorter ones match chatter by chance, "p:" of "step:" in every
   "foo.cpp:12"); a Ray actor prefix (``(Runner pid=``) is looked for whole, since its
   parts are parts of other actors' prefixes (``(TaskRunner pid=`` starts most lines
   of a verl log).
3. The parts are chosen by local search, starting from the committed ones, to minimize
   the sum over the references of (occurrences of the parts' distinct prefixes) / bytes.
4. grep's CPU (user + sys, ``grep -a -b -E`` as the box runs it, output read through a
   pipe) is measured for the committed parts and the chosen ones, alternating, over
   ``--measure-mb`` of each workload and the corpus repeated to 64 MiB; then, for the
   chosen set, what each group of parts sharing a first byte costs (the set without
   them, measured beside the set).

Prints the per-needle table, the measured figures and the ``FORMS`` literal for
tui/sources/grep_filter.py.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.check_vs_grep import logs  # noqa: E402
from tests.corpus import all_verl_logs  # noqa: E402
from tui.parsers.log_scanner import NEEDLES  # noqa: E402
from tui.sources.grep_filter import FORMS, alternatives, grep_needles  # noqa: E402

# A part shorter than this (unless the whole needle) matches chatter by chance.
MIN_PART = 5
# Prefixes longer than this are counted as this long: past it the counts are noise.
LONGEST_PREFIX = 8
# A part may match lines its needle does not (the scanner drops them, but they cross the
# wire): at most this many per MiB of any reference ("failed" of "NCCL operations have
# failed" is in many warnings of a real log).
CHANCE_PER_MIB = 1.0


def parts(needle: bytes) -> list[bytes]:
    """The parts of ``needle`` grep may look for: suffixes from character boundaries (see above)."""
    if needle.startswith(b"("):
        return [needle]
    return [needle[at:] for at in range(len(needle))
            if not 0x80 <= needle[at] < 0xC0 and (at == 0 or len(needle) - at >= MIN_PART)]


class Prefixes:
    """How often each reference holds each prefix of a candidate part, per byte of it; and
    which parts of each needle match few lines it does not (``usable``)."""

    def __init__(self, references: Sequence[bytes], needles: Sequence[bytes]) -> None:
        self.usable = {needle: [part for part in parts(needle)
                                if all(_few_chance_lines(text, part, needles) for text in references)]
                       for needle in needles}
        self.rate: dict[bytes, float] = {}
        wanted = sorted({part[:k] for needle in needles for part in parts(needle)
                         for k in range(1, min(len(part), LONGEST_PREFIX) + 1)}, key=len)
        for prefix in wanted:
            # A prefix absent from every reference has absent extensions: not counted again.
            if len(prefix) > 1 and self.rate.get(prefix[:-1]) == 0.0:
                self.rate[prefix] = 0.0
                continue
            self.rate[prefix] = sum(text.count(prefix) / len(text) for text in references)

    def cost(self, chosen: Sequence[bytes]) -> float:
        """The DFA's slow steps per byte for ``chosen``, summed over the references."""
        return sum(self.rate[prefix] for prefix in
                   {part[:k] for part in chosen for k in range(1, min(len(part), LONGEST_PREFIX) + 1)})


def _few_chance_lines(text: bytes, part: bytes, needles: Sequence[bytes]) -> bool:
    """Whether at most ``CHANCE_PER_MIB`` lines a MiB of ``text`` hold ``part`` and no needle."""
    limit = CHANCE_PER_MIB * len(text) / (1 << 20)
    count, at = 0, text.find(part)
    while at != -1 and count <= limit:
        start, end = text.rfind(b"\n", 0, at) + 1, text.find(b"\n", at)
        end = len(text) if end == -1 else end
        count += not any(needle in text[start:end] for needle in needles)
        at = text.find(part, end)
    return count <= limit


def choose(needles: Sequence[bytes], prefixes: Prefixes, start: dict[bytes, bytes]) -> dict[bytes, bytes]:
    """One part per needle, by local search from ``start``.

    Two moves, until neither makes the set cheaper: one needle takes the part that makes
    the whole set cheapest given the others'; or every part that starts with one byte
    gives way to its needle's best part starting otherwise (a byte several parts share
    costs the set nothing more for one of them, so one needle alone never leaves it).
    """
    chosen = {needle: start[needle] if start.get(needle) in prefixes.usable[needle] else needle
              for needle in needles}
    while True:
        chosen = _one_at_a_time(chosen, prefixes)
        before = prefixes.cost(list(chosen.values()))
        for first in sorted({part[:1] for part in chosen.values()}):
            trial = dict(chosen)
            for needle, part in chosen.items():
                if part[:1] == first and (others := [p for p in prefixes.usable[needle] if p[:1] != first]):
                    rest = [p for other, p in trial.items() if other != needle]
                    trial[needle] = min(others, key=lambda p: (prefixes.cost([*rest, p]), -len(p)))
            trial = _one_at_a_time(trial, prefixes)
            if prefixes.cost(list(trial.values())) < prefixes.cost(list(chosen.values())):
                chosen = trial
        if prefixes.cost(list(chosen.values())) >= before:
            return chosen


def _one_at_a_time(chosen: dict[bytes, bytes], prefixes: Prefixes) -> dict[bytes, bytes]:
    """Each needle in turn takes its cheapest part given the others', until none changes."""
    chosen = dict(chosen)
    changed = True
    while changed:
        changed = False
        for needle in chosen:
            rest = [part for other, part in chosen.items() if other != needle]
            best = min(prefixes.usable[needle], key=lambda part: (prefixes.cost([*rest, part]), -len(part)))
            if prefixes.cost([*rest, best]) < prefixes.cost([*rest, chosen[needle]]):
                chosen[needle], changed = best, True
    return chosen


def grep_cpu(expression: str, path: Path) -> float:
    """CPU seconds (user + sys) of ``grep -a -b -E`` over ``path``, its output read through a pipe."""
    with open(path, "rb") as log:
        process = subprocess.Popen(["grep", "-a", "-b", "-E", "-e", expression], stdin=log,
                                   stdout=subprocess.PIPE, env={"LC_ALL": "C", "PATH": os.defpath})
        assert process.stdout is not None
        while process.stdout.read(1 << 20):
            pass
        _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_utime + usage.ru_stime


def per_gib(expressions: Sequence[str], path: Path, tries: int) -> list[float]:
    """Median CPU seconds per GiB of each expression over ``path``, run in turn ``tries`` times."""
    runs = [[grep_cpu(expression, path) for expression in expressions] for _ in range(tries)]
    scale = (1 << 30) / path.stat().st_size
    return [statistics.median(run[i] for run in runs) * scale for i in range(len(expressions))]


def slice_of(log: Path, size_mb: int, out: Path) -> Path:
    """``size_mb`` MiB from the middle of ``log``, cut at line starts, written to ``out``."""
    with open(log, "rb") as source:
        source.seek(max(0, log.stat().st_size // 2 - (size_mb << 19)))
        data = source.read(size_mb << 20)
    out.write_bytes(data[data.find(b"\n") + 1:data.rfind(b"\n") + 1])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, default=Path("/tmp/bench"), help="where the 1 GiB workloads are (or go)")
    parser.add_argument("--sample-mb", type=int, default=16)
    parser.add_argument("--measure-mb", type=int, default=128)
    parser.add_argument("--tries", type=int, default=5)
    args = parser.parse_args()
    args.logs.mkdir(parents=True, exist_ok=True)
    workloads = dict(logs(args.logs, 1024))
    corpus = b"".join(log.read_bytes() for log in all_verl_logs())
    names = ["seed-001 chatter", "bench/make_log.py", "corpus"]
    samples = [slice_of(workloads["seed-001 chatter"], args.sample_mb, args.logs / "forms_chatter.sample"),
               slice_of(workloads["bench/make_log.py"], args.sample_mb, args.logs / "forms_make.sample")]
    references = [sample.read_bytes() for sample in samples] + [corpus]
    prefixes = Prefixes(references, NEEDLES)
    chosen = choose(NEEDLES, prefixes, FORMS)
    committed = grep_needles(NEEDLES)

    print("| needle | committed part | chosen part | slow steps per MiB, each alone (chatter / make / corpus) |")
    print("|---|---|---|---|")
    for needle in NEEDLES:
        alone = " / ".join(f"{Prefixes([text], [needle]).cost([chosen[needle]]) * (1 << 20):.0f}"
                           for text in references)
        print(f"| `{needle!r}` | `{FORMS.get(needle, needle)!r}` | `{chosen[needle]!r}` | {alone} |")
    print(f"\nslow steps per byte, summed over the references: committed {prefixes.cost(committed):.4f}, "
          f"chosen {prefixes.cost(list(chosen.values())):.4f}")

    measured = [slice_of(workloads["seed-001 chatter"], args.measure_mb, args.logs / "forms_chatter.measure"),
                slice_of(workloads["bench/make_log.py"], args.measure_mb, args.logs / "forms_make.measure"),
                args.logs / "forms_corpus.measure"]
    measured[2].write_bytes(corpus * max(1, (64 << 20) // len(corpus)))
    picked = tuple(dict.fromkeys(chosen.values()))
    expressions = {"committed": alternatives(committed), "chosen": alternatives(picked),
                   "whole needles": alternatives(NEEDLES), "`step:` alone": "step:"}
    print("\ngrep -a -b -E, CPU seconds per GiB (user + sys, median of alternating runs):\n")
    print("| set | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    figures = [per_gib(list(expressions.values()), path, args.tries) for path in measured]
    for i, name in enumerate(expressions):
        print(f"| {name} | " + " | ".join(f"{figure[i]:.2f}" for figure in figures) + " |")

    groups = sorted({part[:1] for part in picked})
    print("\nWhat each first byte's parts cost in the chosen set (the set without them, beside it):\n")
    print("| first byte | parts | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for first in groups:
        rest = alternatives([p for p in picked if p[:1] != first])
        costs = [per_gib([expressions["chosen"], rest], path, max(3, args.tries // 2)) for path in measured]
        print(f"| `{first!r}` | {', '.join(f'`{p!r}`' for p in picked if p[:1] == first)} | "
              + " | ".join(f"{whole - without:+.3f}" for whole, without in costs) + " |")

    print("\nFORMS = {")
    for needle in NEEDLES:
        print(f"    {needle!r}: {chosen[needle]!r},")
    print("}")


if __name__ == "__main__":
    main()
