"""One row per figure, printed as the Markdown table the README carries."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Row:
    """A measured figure, its baseline from the same run (if any), and its target."""

    what: str
    value: str
    baseline: str
    target: str
    ok: bool


def print_table(rows: list[Row], machine: str) -> None:
    """The table, then the machine it ran on."""
    print("| figure | measured | baseline (same run) | target | holds |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row.what} | {row.value} | {row.baseline} | {row.target} | {'yes' if row.ok else '**no**'} |")
    print(f"\nMachine: {machine}")
