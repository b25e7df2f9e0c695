"""Metric concepts and the keys that carry them across verl versions and trainers.

From ../shared/CHECKLIST.md's alias table: newest verl names first, then
older ones, then other trainers' (TRL, ms-swift) names, so every version
fills the same panel.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Concept:
    """A quantity a user watches, whatever a given trainer calls it."""

    id: str
    title: str
    keys: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None

    def resolve(self, available: Iterable[str]) -> str | None:
        """The key that carries this concept in a run with these keys."""
        present = set(available)
        for key in self.keys:
            if key in present:
                return key
        if self.pattern is not None:
            matches = sorted(k for k in present if self.pattern.search(k))
            if matches:
                return matches[0]
        return None


# Validation: ``val-core/<source>/<var>/mean@N`` (v0.4+, the core variable's
# mean), ``val/test_score/<source>`` (v0.2–v0.3), ``test_score/<source>`` (v0.1).
_VALIDATION = re.compile(r"^(?:val-core/.+/mean@\d+$|val/test_score/|test_score/)")

TRAIN_REWARD = Concept("reward", "train reward",
                       ("critic/score/mean", "critic/rewards/mean", "reward", "train/reward"))
VALIDATION = Concept("val", "validation score", pattern=_VALIDATION)
POLICY_LOSS = Concept("pg_loss", "policy loss",
                      ("actor/pg_loss", "actor/loss", "train/loss", "loss"))
KL = Concept("kl", "KL loss", ("actor/kl_loss", "actor/ppo_kl", "kl"))
ENTROPY = Concept("entropy", "entropy", ("actor/entropy", "actor/entropy_loss", "entropy"))
GRAD_NORM = Concept("grad_norm", "grad norm",
                    ("actor/grad_norm", "critic/grad_norm", "grad_norm"))
RESPONSE_LENGTH = Concept("response_length", "response length",
                          ("response_length/mean", "completions/mean_length", "completion_length"))
STEP_TIME = Concept("step_time", "s/it",
                    ("timing_s/step", "timing/step", "time_per_step", "perf/time_per_step",
                     "train/time(s)"))

DASHBOARD_CONCEPTS: tuple[Concept, ...] = (
    TRAIN_REWARD, VALIDATION, POLICY_LOSS, KL, ENTROPY, GRAD_NORM, RESPONSE_LENGTH, STEP_TIME,
)
