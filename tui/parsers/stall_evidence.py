"""Lines that say which phase of a step a run is in: the evidence of where a stall stopped.

A run that stops printing steps has usually said, in the lines since its last step, what it
began and never finished: verl prints ``test_gen_batch meta info: {…}`` when its validation
starts and ``local_global_step_folder: …/global_step_N`` as its checkpoint save begins; the HF Trainer
says ``Saving model checkpoint to …`` and ``***** Running Evaluation *****``; an OpenAI-style
client behind a reward function says ``Retrying request …`` for every call it repeats.
A stalled step whose last such line is a checkpoint save was stuck saving (DESIGN.md's "What
a hang looks like from outside").

Each line is found like an incident's (:mod:`tui.parsers.incidents`): a needle the scanner
(and the box's grep) looks for, then a pattern that confirms it. Pure: text in, records out.
"""

from __future__ import annotations

import re

from tui.parsers.records import PhaseRecord
from tui.parsers.text import PROCESS_PREFIX, strip_stamp

VALIDATION = "validation"
CHECKPOINT = "checkpoint"
REQUEST_RETRY = "request-retry"

# (kind, needles, confirming pattern). A needle is as rare in reward-function chatter as the
# phrase allows: the box's grep pays for each on every byte of a backfill.
PHASE_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    # verl's ``_validate``: ``test_gen_batch meta info: {'eos_token_id': …, 'validate': True, …}``
    # (found by its ``'validate': True``: grep looks for ``test_gen_batch`` at 1.1-1.5× the CPU);
    # the HF Trainer's evaluation banner. verl's ``validation generation end`` is not looked
    # for (grep CPU 1.04× and 1.10×, bench/phase_needles.py's workloads): the validation that
    # began is the phase either way.
    (VALIDATION, ("'validate': True", "***** Running Evaluation"),
     re.compile(r"^test_gen_batch meta info: |^\*{5} Running Evaluation \*{5}")),
    # verl's ``_save_checkpoint``: ``local_global_step_folder: checkpoints/…/global_step_80``;
    # the HF Trainer's ``Saving model checkpoint to out/checkpoint-500``.
    (CHECKPOINT, ("local_global_step_folder: ", "Saving model checkpoint to"),
     re.compile(r"^local_global_step_folder: \S|Saving model checkpoint to \S")),
    # openai-python's retry of a request a server (a reward or judge model) did not answer, logged
    # at INFO: ``Retrying request in 0.42 seconds (retry 1 of 1000)``, before 1.x ``Retrying
    # request to /chat/completions in 0.42 seconds``.
    (REQUEST_RETRY, ("Retrying request",), re.compile(r"Retrying request (?:to \S+ )?in [\d.]+ seconds")),
)
# How each phase reads in a finding: "stalled …, <words>".
PHASE_WORDS = {
    VALIDATION: "in validation",
    CHECKPOINT: "saving a checkpoint",
    REQUEST_RETRY: "retrying a request to a server",
}
# The text kept per line (the finding quotes it; the full line is at its offset).
_MAX_TEXT = 200


def phase_needles() -> tuple[str, ...]:
    """Every needle of every phase, for the scanner and the box's grep."""
    return tuple(needle for _, needles, _ in PHASE_PATTERNS for needle in needles)


def match_phase(segment: str, offset: int) -> PhaseRecord | None:
    """The phase ``segment`` (a cleaned line) says the run began, if it says one."""
    for kind, needles, confirm in PHASE_PATTERNS:
        if not any(needle in segment for needle in needles):
            continue
        line = PROCESS_PREFIX.sub("", strip_stamp(segment.strip()), count=1).strip()
        if confirm.search(line) is not None:
            return PhaseRecord(kind, line[:_MAX_TEXT], offset)
    return None
