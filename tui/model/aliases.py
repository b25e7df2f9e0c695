"""Metric concepts and the keys that carry them across verl versions and trainers.

From the health checklist's table of metric names (the checklist and its
sources: docs/verdict.md): newest verl names first, then older ones, then
other trainers' names (tests/fixtures/logs/kin/GRAMMAR.md says where each
comes from), so every version and every trainer fills the same panel.
KL means the KL to the reference policy: PPO's old-vs-new approximate KL (TRL's
``policy/approxkl_avg``, slime's ``train/ppo_kl``) is not one of its keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tui.model.series import Series


def live_key(keys: list[str], series: Mapping[str, Series] | None) -> str | None:
    """The first of ``keys`` whose series is not all zero, else the first.

    Today's verl prints ``actor/kl_loss:0.0`` on every step of a run that puts
    its KL in the reward instead (use_kl_loss off), beside the real value in
    ``actor/reward_kl_penalty``: a constant zero there means "not used".
    """
    if series is not None:
        for key in keys:
            found = series.get(key)
            if found is not None and found.finite_range() not in ((0.0, 0.0), None):
                return key
    return keys[0] if keys else None


@dataclass(frozen=True, slots=True)
class Concept:
    """A quantity a user watches, whatever a given trainer calls it."""

    id: str
    title: str
    keys: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None
    # A series of zeros is an unused alias (see ``live_key``); needs the series.
    skip_zero: bool = False

    def resolve(self, available: Iterable[str] | Mapping[str, Series]) -> str | None:
        """The key that carries this concept in a run with these keys (or series)."""
        present = set(available)
        found = [key for key in self.keys if key in present]
        if self.skip_zero and found:
            return live_key(found, available if isinstance(available, Mapping) else None)
        if found:
            return found[0]
        if self.pattern is not None:
            matches = sorted(k for k in present if self.pattern.search(k))
            if matches:
                return matches[0]
        return None


# Validation: ``val-core/<source>/<var>/mean@N`` (v0.4+, the core variable's
# mean), ``val/test_score/<source>`` (v0.2–v0.3), ``test_score/<source>`` (v0.1).
# slime/Miles: ``eval/<dataset>``; SkyRL: ``eval/all/avg_score``.
_VALIDATION = re.compile(r"^(?:val-core/.+/mean@\d+$|val/test_score/|test_score/"
                         r"|eval/[^/]+$|eval/all/avg_score$)")
# The data source a per-source validation key scores: verl's ``val-core/<source>/<var>/mean@N``
# (the source may hold ``/``: ``openai/gsm8k``), ``val/test_score/<source>``,
# ``test_score/<source>``; slime's ``eval/<dataset>``.
_SOURCE_OF = re.compile(r"^(?:val-core/(?P<core>.+)/[^/]+/mean@\d+|(?:val/)?test_score/(?P<score>.+)"
                        r"|eval/(?P<eval>[^/]+))$")


def validation_sources(keys: Iterable[str]) -> dict[str, str]:
    """Data source → the validation key that scores it, for a run that validates on
    several data sets (gsm8k and MATH, say) and logs one score each.

    Of a source's keys the first in sorted order is taken, as ``VALIDATION`` picks
    among all of them, so the panel's own key is its first source's. Sources come
    in the order of their keys.
    """
    found: dict[str, str] = {}
    for key in sorted(keys):
        match = _SOURCE_OF.match(key)
        if match is not None:
            source = match.group("core") or match.group("score") or match.group("eval")
            found.setdefault(source, key)
    return found

# Kin keys, in the order of each tuple: TRL (GRPO ``reward``; PPO/RLOO
# ``objective/*``, ``loss/policy_avg``, ``policy/entropy_avg``), ms-swift (TRL's
# names, ``entropy/mean``, ``step_time``), slime/Miles (``rollout/*``,
# ``train/*``, ``perf/step_time``), SkyRL (``reward/avg_raw_reward``,
# ``policy/*``, ``generate/avg_num_tokens``), NeMo-RL (``train/reward``,
# ``train/loss``, ``timing/train/total_step_time``), OpenRLHF (``reward``/``rm``,
# ``policy_loss``/``act_loss``/``pg``, ``kl``, ``gen_len``/``glen``), EasyR1
# (verl's names, ``reward/overall``).
TRAIN_REWARD = Concept("reward", "train reward",
                       ("critic/score/mean", "critic/rewards/mean", "reward", "train/reward",
                        "reward/overall", "rollout/raw_reward", "reward/avg_raw_reward",
                        "objective/scores", "objective/rlhf_reward", "train/total_reward",
                        "train/filtered_reward", "rm"))
VALIDATION = Concept("val", "validation score",
                     ("val/reward_score", "validation/accuracy", "eval_reward"), pattern=_VALIDATION)
POLICY_LOSS = Concept("pg_loss", "policy loss",
                      ("actor/pg_loss", "actor/loss", "train/pg_loss", "policy/policy_loss",
                       "loss/policy_avg", "policy_loss", "act_loss", "pg", "train/loss", "loss"))
# KL to the reference policy: the KL loss (use_kl_loss), else the KL put in
# the reward (``actor/reward_kl_penalty`` today, ``critic/kl`` in older verl),
# else other trainers' names. Never ``actor/ppo_kl``: that is PPO's estimate of
# the old-vs-new policy KL, the size of one update, a different quantity.
KL = Concept("kl", "KL to reference",
             ("actor/kl_loss", "actor/reward_kl_penalty", "critic/kl", "kl", "objective/kl",
              "train/kl_loss", "policy/policy_kl", "policy_kl", "loss/avg_kl", "rollout/kl"),
             skip_zero=True)
ENTROPY = Concept("entropy", "entropy",
                  ("actor/entropy", "actor/entropy_loss", "entropy", "entropy/mean",
                   "train/entropy_loss", "policy/policy_entropy", "policy_entropy", "policy/entropy_avg",
                   "entropy_loss", "ent_loss"))
GRAD_NORM = Concept("grad_norm", "grad norm",
                    ("actor/grad_norm", "critic/grad_norm", "grad_norm", "train/grad_norm",
                     "policy/grad_norm", "actor_grad_norm"))
RESPONSE_LENGTH = Concept("response_length", "response length",
                          ("response_length/mean", "completions/mean_length", "completion_length",
                           "rollout/response_len/mean", "rollout/response_lengths",
                           "generate/avg_num_tokens", "train/mean_gen_tokens_per_sample",
                           "response_length", "gen_len", "glen"))
STEP_TIME = Concept("step_time", "s/it",
                    ("timing_s/step", "timing/step", "time_per_step", "perf/time_per_step",
                     "train/time(s)", "perf/step_time", "timing/train/total_step_time",
                     "step_time", "timing/step_total"))

DASHBOARD_CONCEPTS: tuple[Concept, ...] = (
    TRAIN_REWARD, VALIDATION, POLICY_LOSS, KL, ENTROPY, GRAD_NORM, RESPONSE_LENGTH, STEP_TIME,
)
