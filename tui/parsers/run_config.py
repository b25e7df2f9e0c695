"""The configuration a run printed at start, flattened to dotted keys, and where runs differ.

Two runs of a sweep differ in a handful of settings among hundreds; comparing
their curves means little without them. verl says what it ran with twice, near
the top of its log:

* the launch command, echoed by the run script's ``set -x`` (``+ python3 -m
  verl.trainer.main_ppo algorithm.adv_estimator=grpo data.train_batch_size=1024
  …``): Hydra overrides ``key=value``, ``+key=value`` (add), ``++key=value``
  (add or override), ``~key`` (remove); shell-quoted where the value has
  brackets or spaces;
* the whole resolved configuration, ``pprint(OmegaConf.to_container(config,
  resolve=True))`` in ``main_ppo``: a Python dict literal over hundreds of
  lines, each behind Ray's ``(TaskRunner pid=N)`` prefix (other scripts built
  on Hydra print ``OmegaConf.to_yaml(config)`` instead: YAML, one key a line).

The printed configuration is complete (a key it lacks is absent from that
run); the command line alone says only what was overridden (a key it lacks is
unknown). :func:`differing_keys` keeps the two apart, so a run whose config
was not printed does not differ from every other run in every key.

Pure: text in, records out. The session reads the log's first bytes by range
(``CONFIG_HEAD_BYTES``) once, rather than scanning every line of a growing
log for a block printed once at start.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from tui.parsers.text import PROCESS_PREFIX, decode, strip_ansi

# verl prints its config within the first tens of kilobytes (after the launch
# command, Ray's start-up lines and a few warnings); this much of the log's
# head holds it with room to spare, and costs one read.
CONFIG_HEAD_BYTES = 512 * 1024
# A printed config longer than this many lines is not one (or is cut): give up on it.
_MAX_CONFIG_LINES = 20_000

# Shown for a key a run's complete config lacks, and for one its command line does not set.
ABSENT = "—"
UNKNOWN = "?"

# ``key=value``, ``+key=value``, ``++key=value``, ``~key`` and ``~key=value``: Hydra's override grammar.
_OVERRIDE = re.compile(r"^(\+\+|\+|~)?([A-Za-z_][\w.\-/@]*)(?:=(.*))?$", re.DOTALL)
# A YAML mapping line as ``OmegaConf.to_yaml`` writes it: ``key: value`` or ``key:`` (a block follows).
_YAML_ENTRY = re.compile(r"^( *)([A-Za-z_][\w.\-/@]*):(?: (.*))?$")
_YAML_ITEM = re.compile(r"^( *)- (.*)$")
# The Hydra error that ends a failed job repeats the overrides as a Python list.
_HYDRA_ERROR = "Error executing job with overrides: "
# Another Ray actor's prefix inside a line: its output glued to the end of ours
# (``'experiment_name': 'gemma2b',(WorkerDict pid=65860) Flash Attention …``).
_GLUED_PREFIX = re.compile(r"\((?:[\w.:-]+ ){0,3}pid=\d+(?:, ip=[^)]*)?\)")
# The sections of a verl (and most Hydra trainers') config: a printed dict or YAML
# block is the run's config only if its first key is one of these, or it holds sections.
_SECTIONS = frozenset({"actor_rollout_ref", "algorithm", "critic", "data", "reward_model",
                       "trainer", "model", "worker", "custom_reward_function", "ray_init",
                       "ray_kwargs", "fault", "optim", "rollout"})


@dataclass(frozen=True, slots=True)
class RunConfig:
    """One run's settings as dotted keys (``actor_rollout_ref.rollout.n``) and their
    values as text (``8``, ``grpo``, ``1e-06``, ``true``, ``null``, ``[console, wandb]``).

    ``complete``: the resolved config was printed, so every key the run has is here;
    else only the launch command's overrides were found. ``offset``/``end``: the bytes
    of the printed config in the log (else of the command line), for showing it as printed.
    ``overridden``: the keys the launch command set.
    """

    values: dict[str, str]
    complete: bool
    offset: int
    end: int
    overridden: frozenset[str] = field(default_factory=frozenset)

    def shown(self, key: str) -> str:
        """The value of ``key`` as the diff shows it: ABSENT where the complete config
        lacks it, UNKNOWN where only the command line was seen."""
        if key in self.values:
            return self.values[key]
        return ABSENT if self.complete else UNKNOWN


def parse_run_config(data: bytes, base: int = 0) -> RunConfig | None:
    """The config in ``data`` (the head of a log, starting at byte ``base``): the printed
    config, with the launch command's overrides under it, else the overrides alone; None
    where neither is found."""
    lines = list(_lines(data, base))
    printed = _printed_config(lines)
    command = _command_line(lines)
    if printed is None and command is None:
        return None
    overridden = frozenset(command.values) if command is not None else frozenset()
    if printed is not None:
        return RunConfig(printed.values, True, printed.offset, printed.end, overridden)
    assert command is not None
    return RunConfig(command.values, False, command.offset, command.end, overridden)


def differing_keys(configs: Sequence[RunConfig | None]) -> list[str]:
    """The keys whose known values are not all the same across ``configs``, sorted.

    A key is known in a run whose complete config was printed (its value, or ABSENT)
    and in a run whose command line sets it; it is unknown elsewhere, and an unknown
    value differs from nothing.
    """
    found = [config for config in configs if config is not None]
    keys = sorted({key for config in found for key in config.values})
    differing = []
    for key in keys:
        known = {config.shown(key) for config in found} - {UNKNOWN}
        if len(known) > 1:
            differing.append(key)
    return differing


# --- Lines ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Line:
    """One physical line: its text without colours, its process prefix apart, its bytes."""

    prefix: str
    text: str
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class _Found:
    values: dict[str, str]
    offset: int
    end: int


def _lines(data: bytes, base: int) -> Iterator[_Line]:
    """The physical lines of ``data`` (the last one only if complete), each with its
    process prefix split off, its colours removed and another process's output glued
    to its end cut off; a tqdm redraw keeps its last part."""
    start = 0
    while True:
        stop = data.find(b"\n", start)
        if stop < 0:
            return
        text = strip_ansi(decode(data[start:stop]).rstrip("\r"))
        text = text.rsplit("\r", 1)[-1]
        match = PROCESS_PREFIX.match(text) if text.startswith(("(", "[")) else None
        prefix = match.group(0).strip() if match else ""
        own = text[match.end():] if match else text
        yield _Line(prefix, _GLUED_PREFIX.split(own, 1)[0], base + start, base + stop + 1)
        start = stop + 1


# --- The printed config -----------------------------------------------------------


def _printed_config(lines: list[_Line]) -> _Found | None:
    """The first printed dict or YAML block that is a run's config."""
    for index, line in enumerate(lines):
        if line.text.startswith("{'"):
            found = _dict_block(lines, index)
        elif _YAML_ENTRY.match(line.text) and not line.text.startswith(" "):
            found = _yaml_block(lines, index)
        else:
            continue
        if found is not None:
            return found
    return None


def _dict_block(lines: list[_Line], first: int) -> _Found | None:
    """The pprint'ed dict starting at ``lines[first]``, read through its closing brace
    (lines another process printed in between are skipped), if it is a config."""
    prefix = lines[first].prefix
    parts: list[str] = []
    depth = 0
    for line in lines[first:first + _MAX_CONFIG_LINES]:
        if line.prefix != prefix:
            continue
        parts.append(line.text)
        depth = _depth_after(line.text, depth)
        if depth <= 0:
            value = _literal_text("\n".join(parts))
            if not isinstance(value, dict) or not _is_config(value):
                return None
            return _Found(dict(_flatten(value)), lines[first].offset, line.end)
    return None


def _depth_after(text: str, depth: int) -> int:
    """Bracket depth after ``text``, from the depth before it. pprint writes Python
    literals, and splits a long string into literals of one line each, so a quote
    never stays open across lines."""
    quote, escaped = "", False
    for char in text:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
    return depth


def _literal_text(text: str) -> object:
    """A Python literal's value, tolerating what ``literal_eval`` refuses: ``inf``,
    ``nan`` and other bare names become their text, calls (``np.float64(0.5)``) theirs."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return _literal(tree.body)


def _literal(node: ast.expr) -> object:
    if isinstance(node, ast.Dict):
        return {_key(key): _literal(value) for key, value in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float)):
        return -node.operand.value
    return ast.unparse(node)


def _key(node: ast.expr | None) -> str:
    value = _literal(node) if node is not None else "**"
    return value if isinstance(value, str) else str(value)


def _is_config(value: Mapping[str, object]) -> bool:
    """A run's config, not a trainer's metrics dict (TRL prints those flat)."""
    sections = [key for key, item in value.items() if isinstance(item, dict)]
    return bool(sections) and (next(iter(value)) in _SECTIONS or any(k in _SECTIONS for k in sections))


def _flatten(value: Mapping[str, object], prefix: str = "") -> Iterator[tuple[str, str]]:
    for key, item in value.items():
        dotted = f"{prefix}{key}"
        if isinstance(item, dict) and item:
            yield from _flatten(item, f"{dotted}.")
        else:
            yield dotted, _shown(item)


def _shown(value: object) -> str:
    """A value as Hydra users write it: ``true``, ``null``, ``1e-06``, ``[a, b]``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_shown(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_shown(item)}" for key, item in value.items()) + "}"
    return str(value)


def _yaml_block(lines: list[_Line], first: int) -> _Found | None:
    """The YAML mapping ``OmegaConf.to_yaml`` printed from ``lines[first]`` on: nested
    ``key:`` blocks by indentation, ``key: value`` leaves, ``- item`` lists; it ends at
    the first line that is none of these."""
    prefix = lines[first].prefix
    values: dict[str, str] = {}
    path: list[tuple[int, str]] = []  # (indent, key) of the open blocks
    items: list[str] = []
    listing: str | None = None
    last = first
    for index in range(first, min(len(lines), first + _MAX_CONFIG_LINES)):
        line = lines[index]
        if line.prefix != prefix:
            continue
        item = _YAML_ITEM.match(line.text)
        if item is not None and listing is not None:
            items.append(_scalar(item.group(2)))
            last = index
            continue
        entry = _YAML_ENTRY.match(line.text)
        if entry is None:
            break
        if listing is not None:
            values[listing] = "[" + ", ".join(items) + "]"
            listing, items = None, []
        indent, key, rest = len(entry.group(1)), entry.group(2), entry.group(3)
        while path and path[-1][0] >= indent:
            path.pop()
        dotted = ".".join([*(name for _, name in path), key])
        if rest is None:
            path.append((indent, key))
            listing = dotted  # a block: nested keys or list items follow
            items = []
        else:
            values[dotted] = _scalar(rest)
        last = index
    if listing is not None and items:
        values[listing] = "[" + ", ".join(items) + "]"
    elif listing is not None and listing not in values and not any(k.startswith(listing + ".") for k in values):
        values[listing] = "null"
    roots = {key.split(".", 1)[0] for key in values if "." in key}
    if not roots & _SECTIONS:
        return None
    return _Found(values, lines[first].offset, lines[last].end)


def _scalar(text: str) -> str:
    """A YAML or Hydra scalar as :func:`_shown` writes it (quotes off, numbers normalised)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    lowered = text.lower()
    if lowered in ("null", "none", "~"):
        return "null"
    if lowered in ("true", "false"):
        return lowered
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return "[" + ", ".join(_scalar(item) for item in _split_top(inner)) + "]" if inner else "[]"
    try:
        return str(int(text))
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return repr(number) if text.lower() not in ("inf", "-inf", "nan") else text


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part for part in parts if part.strip()]


# --- The launch command ------------------------------------------------------------


def _command_line(lines: list[_Line]) -> _Found | None:
    """The overrides of the first launch command (``python -m …``, ``… .py``) that has
    some, or those Hydra's error repeats."""
    for line in lines:
        if _HYDRA_ERROR in line.text:
            found = _hydra_error(line)
        elif "=" in line.text and ("-m " in line.text or ".py" in line.text):
            found = _overrides(line)
        else:
            continue
        if found is not None:
            return found
    return None


def _overrides(line: _Line) -> _Found | None:
    try:
        words = shlex.split(line.text)
    except ValueError:  # an unbalanced quote: a line that only looks like a command
        return None
    for at, word in enumerate(words):
        if word == "-m" or word.endswith(".py"):
            values = _override_values(words[at + 1:])
            if values:
                return _Found(values, line.offset, line.end)
    return None


def _hydra_error(line: _Line) -> _Found | None:
    listed = _literal_text(line.text.split(_HYDRA_ERROR, 1)[1])
    if not isinstance(listed, list):
        return None
    values = _override_values([str(word) for word in listed])
    return _Found(values, line.offset, line.end) if values else None


def _override_values(words: list[str]) -> dict[str, str]:
    """The Hydra overrides among ``words`` (the last of a repeated key wins; options
    such as ``--config-path=…`` are not overrides)."""
    values = {}
    for word in words:
        match = _OVERRIDE.match(word)
        if match is None:
            continue
        marker, key, value = match.groups()
        if marker == "~":
            values[key] = ABSENT
        elif value is not None:
            values[key] = _scalar(value)
    return values
