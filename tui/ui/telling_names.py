"""Runs' names cut to the part that tells them apart: the fleet's rows, compare's legend and
``rlwatch status`` on several runs say the same.

The runs of a sweep share most of their name and differ at its end
(``sw/grpo_qwen2.5-7b_gsm8k_lr1e-6_kl0.001``, ``…_lr1e-6_kl0.01``,
``…_lr3e-6_kl0.001``): cut at a fixed width from the left, all three read
``sw/grpo_qwen2.5…``. So the directory they share is dropped, and where the
names still do not fit, the start they share is folded to ``…`` and the tail
that differs kept (``…lr1e-6_kl0.001``). Pure, so ``status`` uses it without
Textual.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

# Where a shared start may be cut: a name's words are joined by these.
WORD_MARKS = "/_-."


def elide_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, its middle replaced by ``…`` if need be."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def without_shared_directory(names: Sequence[str]) -> list[str]:
    """``names`` less the leading directories they all share (``sw/a``, ``sw/b`` → ``a``,
    ``b``); a name's last part always stays."""
    if len(set(names)) < 2:
        return list(names)
    parts = [name.split("/") for name in names]
    shared = 0
    while all(len(part) > shared + 1 for part in parts) and len({part[shared] for part in parts}) == 1:
        shared += 1
    return ["/".join(part[shared:]) for part in parts]


def without_shared_start(names: Sequence[str]) -> list[str]:
    """``names`` with the start they all share, up to its last word mark, folded to ``…``
    (``…lr1e-6_kl0.001`` from ``grpo_qwen2.5-7b_gsm8k_lr1e-6_kl0.001`` and its sweep)."""
    if len(set(names)) < 2:
        return list(names)
    shared = os.path.commonprefix(list(names))
    cut = max(shared.rfind(mark) for mark in WORD_MARKS) + 1
    if cut <= 1:  # folding one character to ``…`` would gain nothing
        return list(names)
    return ["…" + name[cut:] for name in names]


def telling_names(names: Sequence[str], room: int | None = None) -> list[str]:
    """Each name as a list of runs shows it in ``room`` cells (None: as short as it tells
    the runs apart): the shared directory dropped; then, where the longest does not fit, the
    shared start folded to ``…``; then any name still too long cut in its middle."""
    names = without_shared_directory(names)
    if room is None or max((len(name) for name in names), default=0) > room:
        names = without_shared_start(names)
    if room is not None:
        names = [elide_middle(name, room) for name in names]
    return names
