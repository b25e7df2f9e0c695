"""Synthetic runs for the benchmarks: many steps, many metrics, as verl prints them."""

from __future__ import annotations

import math
import random

from tui.model.run_model import RunModel
from tui.parsers.records import StepRecord

# 150 keys in verl's families (actor/, critic/, timing_s/, perf/, response_length/, val-…).
KEYS = ([f"actor/{k}" for k in ("pg_loss", "kl_loss", "entropy", "grad_norm", "pg_clipfrac", "ppo_kl", "lr")]
        + [f"critic/{k}/{s}" for k in ("score", "rewards", "advantages", "returns") for s in ("mean", "max", "min")]
        + [f"timing_s/{k}" for k in ("step", "gen", "ref", "old_log_prob", "adv", "update_actor", "testing")]
        + [f"response_length/{s}" for s in ("mean", "max", "min", "clip_ratio")]
        + [f"extra/metric_{i:03d}" for i in range(120)])[:150]


def step_line(step: int, rng: random.Random) -> bytes:
    """One console step line with 150 full-precision values."""
    items = [f"{key}:{rng.gauss(0.5, 0.2)!r}" for key in KEYS]
    items[KEYS.index("timing_s/step")] = f"timing_s/step:{60 + rng.random() * 5!r}"
    return (f"step:{step} - " + " - ".join(items) + "\n").encode()


def fill_model(steps: int, seed: int = 0, model: RunModel | None = None) -> RunModel:
    """A model holding ``steps`` more steps × 150 metrics, built through the model's own API."""
    rng = random.Random(seed)
    model = model if model is not None else RunModel("synthetic")
    first = (model.last_step or 0) + 1
    offset = first * 3000
    for step in range(first, first + steps):
        metrics = {key: rng.gauss(0.5, 0.2) for key in KEYS}
        metrics["timing_s/step"] = 60 + rng.random() * 5 if step % 997 else math.nan
        model.apply([StepRecord(step, metrics, offset, offset + 3000)], now=float(step))
        offset += 3000
    return model


def data_bytes(steps: int) -> int:
    """The data itself: one step number and one float64 per value."""
    return steps * len(KEYS) * (8 + 8)
