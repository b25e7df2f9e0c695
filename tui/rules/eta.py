"""The ETA a run's state allows: only a running run has one.

tqdm's estimate and "steps left × seconds a step" are the time to the end of a run that is
still stepping. A crashed or finished run has no end ahead of it, and a stalled one's is
unknown: showing the last estimate there (``ETA 50s`` on a run that died an hour ago, a frozen
``ETA 2s`` on one silent for ten minutes) tells the user the opposite of the verdict. A run
whose last step is overdue (far longer ago than a step takes, before the stall rule has
fired) has no ETA either; a stalled run shows instead how long since its last step against
its typical step (:func:`overdue_words`). A step that runs a slow phase (a save, a validation:
:func:`tui.rules.stall_phase.phase_allowance`) is overdue only past a step plus that phase's
slowest time so far, and the words say what it may take.
"""

from __future__ import annotations

from tui.durations import word_duration
from tui.model.run_model import RunModel
from tui.rules.run_state import RunState
from tui.rules.stall_phase import Allowance, phase_allowance

# A step is overdue once this many typical steps have gone by without one, and at least
# OVERDUE_MIN_S (a fast run's pause to save a checkpoint is no hang).
OVERDUE_STEPS = 3.0
OVERDUE_MIN_S = 60.0
# What screens and text show where a run has no ETA because it is not running.
NO_ETA = "—"


def eta_s(model: RunModel, state: RunState, now: float) -> float | None:
    """Seconds left, for a running run whose last step is not overdue; else None."""
    if state != RunState.RUNNING:
        return None
    overdue = overdue_s(model.last_step_at, model.sec_per_it, now, phase_allowance(model))
    return None if overdue is not None else model.eta_s


def overdue_s(last_step_at: float | None, sec_per_it: float | None, now: float,
              allowance: Allowance | None = None) -> float | None:
    """How long since the last step, where that is far longer than a step takes (and than a
    step plus its slow phases' ``allowance``); else None."""
    if last_step_at is None or sec_per_it is None or not sec_per_it > 0:
        return None
    quiet = now - last_step_at
    phase_s = allowance.seconds if allowance is not None else 0.0
    return quiet if quiet > max(OVERDUE_STEPS * sec_per_it, OVERDUE_MIN_S, sec_per_it + phase_s) else None


def overdue_words(last_step_at: float | None, sec_per_it: float | None, now: float,
                  allowance: Allowance | None = None) -> str | None:
    """``no step for 12 min (a step takes 30 s)``, for a run whose last step is overdue;
    ``(a step takes 1 min, a save 30 min)`` where the step under way saves."""
    quiet = overdue_s(last_step_at, sec_per_it, now, allowance)
    if quiet is None or sec_per_it is None:
        return None
    typical = f"{sec_per_it:.3g} s" if sec_per_it < 60 else word_duration(sec_per_it)
    slow = f", {allowance.words}" if allowance is not None else ""
    return f"no step for {word_duration(quiet)} (a step takes {typical}{slow})"
