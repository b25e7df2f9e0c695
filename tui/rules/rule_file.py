"""Reading rule files: the shipped defaults, then the user's overrides.

A rule file is TOML with one ``[[rule]]`` table per rule. The default file
encodes the health checklist (docs/verdict.md); a user's ``~/.config/rlwatch/rules.toml``
and ``--rules FILE`` are read on top of it: a table whose ``id`` exists
changes only the fields it names (``enabled = false``, ``high = 0.05``), a
new ``id`` adds a rule. A broken file fails with its path, the line of the
offending table and what is wrong.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from tui.regular_file import NotUtf8, read_utf8
from tui.rules.findings import Severity

_NUMBER = (int, float)
# kind → {parameter: (accepted types, required, default)}
# Parameters that count steps (a window of none, or a run of none, means nothing).
_COUNTS = ("steps", "window", "sustain", "settle")
# A band the run has sat outside of on at least this share of its judged points, over at
# least ``settle`` steps, is a property of the run (a note), no longer news (see ``engine``).
SETTLE_STEPS = 20
KIND_PARAMS: dict[str, dict[str, tuple[tuple[type, ...], bool, Any]]] = {
    "band": {"low": (_NUMBER, False, None), "high": (_NUMBER, False, None),
             "settle": ((int,), False, SETTLE_STEPS)},
    # ``noise``: the whole decline must exceed that many times the median step-to-step
    # change over the ``window`` moves before it (0: off), so a fall inside the metric's
    # own noise is not one.
    "decline": {"steps": ((int,), True, None), "direction": ((str,), False, "down"),
                "min_change": (_NUMBER, False, 0.0), "noise": (_NUMBER, False, 0.0),
                "window": ((int,), False, 20)},
    "stuck": {"steps": ((int,), True, None), "zero_only": ((bool,), False, False),
              "companions": ((list,), False, [])},
    "spike": {"window": ((int,), True, None), "ratio": (_NUMBER, True, None),
              "direction": ((str,), False, "up"), "floor": (_NUMBER, False, 0.0),
              "sustain": ((int,), False, 1)},
    # ``noise``/``window``: as for decline, the jump must exceed the metric's own noise.
    "jump": {"delta": (_NUMBER, True, None), "noise": (_NUMBER, False, 0.0),
             "window": ((int,), False, 20)},
    "nonfinite": {},
    "relation": {"other": ((list,), True, None), "max_gap": (_NUMBER, True, None),
                 "settle": ((int,), False, SETTLE_STEPS)},
    # ``phase_factor``: a step that runs a slow phase (a save, a validation: by the printed
    # schedule or a line) may take a typical step plus this many times that phase's slowest
    # time so far; the limit stays within ``min_seconds`` (floor) and ``max_seconds`` (ceiling).
    "stalled": {"factor": (_NUMBER, True, None), "min_seconds": (_NUMBER, False, 0.0),
                "max_seconds": (_NUMBER, False, 6 * 3600.0), "phase_factor": (_NUMBER, False, 2.0),
                "quiet_seconds": (_NUMBER, False, 3600.0)},
    # Failures in the log: the crash the run did not go on after, or (``survived``) the
    # errors it went on after and those printed after its own end.
    "incident": {"kinds": ((list,), True, None), "survived": ((bool,), False, False)},
    # The scheduler's word on the job (Ray's Jobs API, Slurm): failed or stopped.
    "job": {},
    # On accelerator readings: memory used above ``mem_fraction`` of the device, memory rising
    # by ``mem_jump_mib`` within ``window_s``, or mean utilisation under ``util_below`` over it.
    "accelerator": {"check": ((str,), True, None), "mem_fraction": (_NUMBER, False, 0.95),
                    "mem_jump_mib": (_NUMBER, False, 8192.0), "util_below": (_NUMBER, False, 50.0),
                    "window_s": (_NUMBER, False, 300.0)},
}
# Where each number of a rule means something (every one must also be finite: a nan
# threshold never fires, an inf one neither). Outside, a rule is silently dead or always on
# (``quiet_seconds = -1`` called every run stalled).
_RANGES: dict[str, tuple[Callable[[float], bool], str]] = {
    "min_change": (lambda v: v >= 0, "0 or more"),
    "ratio": (lambda v: v > 1, "more than 1 (a multiple of the recent median)"),
    "delta": (lambda v: v > 0, "more than 0"),
    "max_gap": (lambda v: v >= 0, "0 or more"),
    "factor": (lambda v: v >= 1, "1 or more (a multiple of the typical step time)"),
    "min_seconds": (lambda v: v >= 0, "0 or more seconds"),
    "max_seconds": (lambda v: v > 0, "more than 0 seconds"),
    "phase_factor": (lambda v: v >= 1, "1 or more (a multiple of a phase's slowest time)"),
    "quiet_seconds": (lambda v: v > 0, "more than 0 seconds"),
    "mem_fraction": (lambda v: 0 < v <= 1, "more than 0 and at most 1 (a fraction of the memory)"),
    "mem_jump_mib": (lambda v: v > 0, "more than 0 MiB"),
    "util_below": (lambda v: 0 < v <= 100, "a percentage: more than 0, at most 100"),
    "window_s": (lambda v: v > 0, "more than 0 seconds"),
}
ACCELERATOR_CHECKS = ("memory-near-limit", "memory-jump", "util-below")
_DIRECTIONS = {"decline": ("down", "up"), "spike": ("up", "down", "both")}
_COMMON = {"id", "kind", "severity", "metrics", "explain", "source", "enabled", "warmup",
           "skip_zero", "unless"}
DEFAULT_RULES = "default_rules.toml"


class RuleFileError(Exception):
    """A rule file that cannot be used; the message names file, line and problem."""


@dataclass(frozen=True, slots=True)
class Unless:
    """``config`` (a dotted key of the printed config) is ``equals`` (as text, any case): the
    rule does not apply, because ``why``."""

    config: str
    equals: str
    why: str


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """One rule: what it reads, how it judges, how bad a hit is, and why."""

    id: str
    kind: str
    severity: Severity
    metrics: tuple[str, ...]
    explain: str
    source: str = ""
    enabled: bool = True
    warmup: int = 0
    # An alias whose series is all zero is unused: judge the next one (see
    # tui.model.aliases.live_key; today's verl prints actor/kl_loss:0.0 when the KL is in the reward).
    skip_zero: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    # Settings of the run's printed config under which the rule cannot mean what the
    # checklist means: the rule is not judged there, and its note says why.
    unless: tuple[Unless, ...] = ()
    # Acknowledged for every run (a rule file's ``mute``, ``--mute``): shown, never counted.
    muted: bool = False




def override_paths(explicit: str | None) -> list[Path]:
    """The user's rule file (``~/.config/rlwatch/rules.toml``) if present, then ``--rules``."""
    from platformdirs import user_config_path

    found = [path for path in [user_config_path("rlwatch") / "rules.toml"] if _exists(path)]
    if explicit is not None:
        found.append(Path(explicit).expanduser())
    return found


def _exists(path: Path) -> bool:
    """Whether there is something at ``path`` (a FIFO or a link to a device too: reading it
    says what it is rather than skipping the user's rules without a word)."""
    try:
        return path.exists()
    except OSError:  # an unreadable home (another user's HOME, say) has no rules for us
        return False


def default_rules_text() -> str:
    """The shipped rule file."""
    return resources.files("tui.rules").joinpath(DEFAULT_RULES).read_text(encoding="utf-8")


def load_rules(*overrides: Path, mute: str | None = None) -> list[RuleSpec]:
    """The default rules with each existing override file applied in order, and the rules
    ``mute`` names (``--mute RULE[,RULE…]``) muted."""
    rules = parse_rules(default_rules_text(), "default rules")
    for path in overrides:
        try:
            text = read_utf8(path)  # never a FIFO or a device: those would hang every command
        except OSError as error:
            raise RuleFileError(f"{path}: {error.strerror or error}") from None
        except NotUtf8 as error:
            raise RuleFileError(f"{path}: {error}") from None
        rules = apply_overrides(rules, text, str(path))
    if mute is not None:
        rules = muted(rules, [name.strip() for name in mute.split(",") if name.strip()], "--mute")
    return rules


def muted(rules: list[RuleSpec], ids: list[str], where: str) -> list[RuleSpec]:
    """``rules`` with those named by ``ids`` muted; an id no rule has is an error (a typo
    would silently mute nothing)."""
    known = {rule.id for rule in rules}
    unknown = [rule_id for rule_id in ids if rule_id not in known]
    if unknown:
        raise RuleFileError(f"{where}: no rule named {', '.join(map(repr, unknown))} to mute "
                            "(`rlwatch rules` lists them)")
    return [replace(rule, muted=True) if rule.id in ids else rule for rule in rules]


def parse_rules(text: str, name: str) -> list[RuleSpec]:
    """Parse a complete rule file (every table must define a whole rule)."""
    return apply_overrides([], text, name)


def apply_overrides(rules: list[RuleSpec], text: str, name: str) -> list[RuleSpec]:
    """Apply a rule file's tables on top of ``rules``, then its ``mute`` list."""
    tables, mute = _tables(text, name)
    by_id = {rule.id: rule for rule in rules}
    order = [rule.id for rule in rules]
    for index, table in enumerate(tables):
        where = f"{name}:{_table_line(text, index)}"
        rule_id = table.get("id")
        if not isinstance(rule_id, str) or not rule_id:
            raise RuleFileError(f"{where}: every [[rule]] needs an id (a non-empty string)")
        if rule_id in by_id:
            by_id[rule_id] = _merge(by_id[rule_id], table, where)
        else:
            by_id[rule_id] = _build(table, where)
            order.append(rule_id)
    return muted([by_id[rule_id] for rule_id in order], mute, name)


def _tables(text: str, name: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The file's ``[[rule]]`` tables and its ``mute = [...]`` list."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RuleFileError(f"{name}: {error}") from None
    unknown = set(document) - {"rule", "mute"}
    if unknown:
        raise RuleFileError(f"{name}: unknown top-level key(s) {sorted(unknown)}; "
                            "rules go in [[rule]] tables")
    tables = document.get("rule", [])
    if not isinstance(tables, list):
        raise RuleFileError(f"{name}: 'rule' must be an array of tables: write [[rule]]")
    mute = document.get("mute", [])
    if not isinstance(mute, list) or not all(isinstance(rule_id, str) for rule_id in mute):
        raise RuleFileError(f"{name}: mute must be a list of rule ids, e.g. mute = [\"clipfrac\"]")
    return tables, mute


def _table_line(text: str, index: int) -> int:
    """1-based line of the ``index``-th ``[[rule]]`` header (TOML keeps no positions)."""
    headers = [number for number, line in enumerate(text.splitlines(), 1)
               if re.match(r"\s*\[\[\s*rule\s*\]\]", line)]
    return headers[index] if index < len(headers) else 1


def _build(table: dict[str, Any], where: str) -> RuleSpec:
    for required in ("kind", "severity", "metrics", "explain"):
        if required not in table:
            raise RuleFileError(f"{where}: rule {table['id']!r} is new and needs '{required}'")
    kind = table["kind"]
    if kind not in KIND_PARAMS:
        raise RuleFileError(f"{where}: rule {table['id']!r}: unknown kind {kind!r} "
                            f"(one of {', '.join(KIND_PARAMS)})")
    base = RuleSpec(id=table["id"], kind=kind, severity=Severity.WARNING, metrics=(), explain="",
                    params={name: default for name, (_, _, default) in KIND_PARAMS[kind].items()})
    return _merge(base, table, where, new=True)


def _merge(rule: RuleSpec, table: dict[str, Any], where: str, new: bool = False) -> RuleSpec:
    if "kind" in table and table["kind"] != rule.kind:
        raise RuleFileError(f"{where}: rule {rule.id!r} is of kind {rule.kind!r}; "
                            "give a new id to define a rule of another kind")
    schema = KIND_PARAMS[rule.kind]
    params = dict(rule.params)
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key in ("id", "kind"):
            continue
        if key in _COMMON:
            changes[key] = _common(rule.id, key, value, where)
        elif key in schema:
            types = schema[key][0]
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                raise RuleFileError(f"{where}: rule {rule.id!r}: '{key}' must be "
                                    f"{' or '.join(t.__name__ for t in types)}, not {value!r}")
            if isinstance(value, _NUMBER) and not isinstance(value, bool):
                _check_number(rule.id, key, value, where)
            params[key] = value
        else:
            raise RuleFileError(f"{where}: rule {rule.id!r}: unknown field '{key}' for kind "
                                f"{rule.kind!r} (known: {', '.join(sorted(_COMMON | set(schema)))})")
    missing = [name for name, (_, required, _) in schema.items() if required and params.get(name) is None]
    if missing:
        raise RuleFileError(f"{where}: rule {rule.id!r} ({rule.kind}) needs {', '.join(missing)}")
    if rule.kind == "band" and params["low"] is None and params["high"] is None:
        raise RuleFileError(f"{where}: rule {rule.id!r} (band) needs low, high or both")
    if rule.kind == "band" and None not in (params["low"], params["high"]) and params["low"] >= params["high"]:
        raise RuleFileError(f"{where}: rule {rule.id!r}: low ({params['low']}) must be below "
                            f"high ({params['high']})")
    if rule.kind == "stalled" and params["max_seconds"] < params["min_seconds"]:
        raise RuleFileError(f"{where}: rule {rule.id!r}: max_seconds ({params['max_seconds']:g}) must not be "
                            f"below min_seconds ({params['min_seconds']:g})")
    for count in _COUNTS:
        if isinstance(params.get(count), int) and params[count] < 1:
            raise RuleFileError(f"{where}: rule {rule.id!r}: {count} counts steps: 1 or more, "
                                f"not {params[count]}")
    allowed = _DIRECTIONS.get(rule.kind)
    if allowed and params.get("direction") not in allowed:
        raise RuleFileError(f"{where}: rule {rule.id!r}: direction must be one of {allowed}")
    result = replace(rule, params=params, **changes)
    if rule.kind == "accelerator" and params["check"] not in ACCELERATOR_CHECKS:
        raise RuleFileError(f"{where}: rule {rule.id!r}: check must be one of {ACCELERATOR_CHECKS}")
    if new and not result.metrics and rule.kind not in ("stalled", "incident", "accelerator", "job"):
        raise RuleFileError(f"{where}: rule {rule.id!r} needs at least one metric")
    return result


def _check_number(rule_id: str, key: str, value: float, where: str) -> None:
    """Refuse a rule's number that is not finite or outside where ``key`` means something."""
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer past float range
        finite = False
    if not finite:
        raise RuleFileError(f"{where}: rule {rule_id!r}: '{key}' must be a finite number, not {value!r}")
    test, meaning = _RANGES.get(key, (lambda _: True, ""))
    if not test(value):
        raise RuleFileError(f"{where}: rule {rule_id!r}: '{key}' must be {meaning}, not {value!r}")


def _common(rule_id: str, key: str, value: Any, where: str) -> Any:
    if key == "severity":
        try:
            return Severity(value)
        except ValueError:
            raise RuleFileError(f"{where}: rule {rule_id!r}: severity must be 'warning' or "
                                f"'critical', not {value!r}") from None
    if key == "metrics":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RuleFileError(f"{where}: rule {rule_id!r}: metrics must be a list of strings")
        return tuple(value)
    if key == "unless":
        return _unless(rule_id, value, where)
    if key in ("enabled", "skip_zero"):
        if not isinstance(value, bool):
            raise RuleFileError(f"{where}: rule {rule_id!r}: {key} must be true or false")
        return value
    if key == "warmup":
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise RuleFileError(f"{where}: rule {rule_id!r}: warmup must be a whole number ≥ 0")
        return value
    if not isinstance(value, str):
        raise RuleFileError(f"{where}: rule {rule_id!r}: {key} must be a string")
    return value


def _unless(rule_id: str, value: Any, where: str) -> tuple[Unless, ...]:
    """A rule's ``[[rule.unless]]`` tables: ``config``, ``equals`` and ``why``, all text."""
    fields = ("config", "equals", "why")
    if not isinstance(value, list) or not all(
            isinstance(table, dict) and set(table) == set(fields)
            and all(isinstance(table[name], str) and table[name] for name in fields)
            for table in value):
        raise RuleFileError(f"{where}: rule {rule_id!r}: each [[rule.unless]] needs config, "
                            "equals and why (non-empty strings) and nothing else")
    return tuple(Unless(table["config"], table["equals"], table["why"]) for table in value)
