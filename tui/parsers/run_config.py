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
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from tui.parsers.text import PROCESS_PREFIX, decode, strip_ansi, strip_stamp

# verl prints its config within the first tens of kilobytes (after the launch
# command, Ray's start-up lines and a few warnings); this much of the log's
# head holds it with room to spare, and costs one read.
CONFIG_HEAD_BYTES = 512 * 1024
# A one-line dict a terminal cut into rows: rows of (nearly) its width, at least this wide.
_WRAP_WIDTH = 80
_WRAP_SLACK = 2
# A printed config longer than this many lines is not one (or is cut): give up on it.
_MAX_CONFIG_LINES = 20_000

# Shown for a key a run's complete config lacks, and for one its command line does not set.
ABSENT = "—"
UNKNOWN = "?"

# ``key=value``, ``+key=value``, ``++key=value``, ``~key`` and ``~key=value``: Hydra's override grammar.
_OVERRIDE = re.compile(r"^(\+\+|\+|~)?([A-Za-z_][\w.\-/@]*)(?:=(.*))?$", re.DOTALL)
# A YAML mapping line as ``OmegaConf.to_yaml`` writes it: ``key: value`` or ``key:`` (a block follows).
_YAML_ENTRY = re.compile(r"""^( *)([A-Za-z_][\w.\-/@]*|'[^']*'|"[^"]*"):(?: (.*))?$""")
_YAML_ITEM = re.compile(r"^( *)- (.*)$")
# A key of a pprint'ed dict, where it stands: ``'key': `` or ``{'key': `` (a nested dict's first).
_PPRINT_KEY = re.compile(r"""\{?('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"): """)
# The Hydra error that ends a failed job repeats the overrides as a Python list.
_HYDRA_ERROR = "Error executing job with overrides: "
# Another Ray actor's prefix inside a line: its output glued to the end of ours
# (``'experiment_name': 'gemma2b',(WorkerDict pid=65860) Flash Attention …``).
_GLUED_PREFIX = re.compile(r"\((?:[\w.:-]+ ){0,3}pid=\d+(?:, ip=[^)]*)?\)")
# The sections of a verl (and most Hydra trainers') config: a printed dict or YAML
# block is the run's config only if it nests keys under one of these.
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
    """One physical line: its text without colours, its process prefix apart, its bytes,
    and how many columns it took (a terminal cuts lines at its width)."""

    prefix: str
    text: str
    offset: int
    end: int
    columns: int


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
        text = strip_stamp(strip_ansi(decode(data[start:stop]).rstrip("\r")))
        text = text.rsplit("\r", 1)[-1]
        match = PROCESS_PREFIX.match(text) if text.startswith(("(", "[")) else None
        prefix = match.group(0).strip() if match else ""
        own = text[match.end():] if match else text
        yield _Line(prefix, _GLUED_PREFIX.split(own, 1)[0], base + start, base + stop + 1, len(text))
        start = stop + 1


# --- The printed config -----------------------------------------------------------


def _printed_config(lines: list[_Line]) -> _Found | None:
    """The first printed dict or YAML block that is a run's config. A block that is not
    one is stepped over whole: a chatty library's ``INFO: …`` lines look like YAML, and
    trying each of them again as a block's start would cost the square of their count."""
    index = 0
    while index < len(lines):
        text = lines[index].text
        if text.startswith("{'"):
            found, last = _dict_block(lines, index)
        elif _YAML_ENTRY.match(text) and not text.startswith(" "):
            found, last = _yaml_block(lines, index)
        else:
            index += 1
            continue
        if found is not None:
            return found
        index = last + 1
    return None


def _dict_block(lines: list[_Line], first: int) -> tuple[_Found | None, int]:
    """The dict printed from ``lines[first]`` on, if it is a config: a pprint'ed one goes
    on over the same process's indented lines (another process's lines in between are
    skipped), a ``print(config)`` one is a single line that a terminal may have cut
    into rows of its width (corpus 051); either ends where its braces close."""
    prefix, width = lines[first].prefix, lines[first].columns
    rows = [lines[first].text]
    depth = _depth_after(rows[0], 0)
    last, wrapped = first, False
    for index in range(first + 1, min(len(lines), first + _MAX_CONFIG_LINES)):
        if depth <= 0:
            break
        line = lines[index]
        if line.prefix != prefix:
            continue
        if line.text.startswith(" "):
            rows.append(line.text)
        elif _WRAP_WIDTH <= width and abs(lines[last].columns - width) <= _WRAP_SLACK:
            rows[-1] += line.text  # the rest of a row the terminal cut at its width
            wrapped = True
        else:
            break  # the log again: the dict lost its closing line (see _pprint_values)
        depth = _depth_after(line.text, depth)
        last = index
    if len(rows) > 1 and not wrapped:
        values = _pprint_values(rows)
    else:
        whole = _literal_text(rows[0] if len(rows) == 1 else "\n".join(rows))
        values = dict(_flatten(whole)) if isinstance(whole, dict) else {}
    return _Found(values, lines[first].offset, lines[last].end) if _is_config(values) else None, last


def _depth_after(text: str, depth: int) -> int:
    """Bracket depth after ``text``, from the depth before it. pprint writes Python
    literals, and splits a long string into literals of one line each, so a quote
    never stays open across lines."""
    after = depth
    for _, _, after in _structure(text, depth):  # noqa: B007 - the last one is the answer
        pass
    return after


def _structure(text: str, depth: int = 0) -> Iterator[tuple[int, str, int]]:
    """Each bracket and comma of ``text`` outside its string literals (quoted with ' or ",
    backslash escapes): where it is, what it is, and the bracket depth after it."""
    quote, escaped = "", False
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "{[(,}])":
            if char != ",":
                depth += 1 if char in "{[(" else -1
            yield index, char, depth


def _pprint_values(texts: list[str]) -> dict[str, str]:
    """The leaves of a pprint'ed nested dict, by dotted key, read by where each key stands.

    pprint puts a nested dict's keys one per line, each at the column of its first
    key, so a key's column says which dict it belongs to: the same reading as the
    eye's. Unlike evaluating the whole literal, this survives a log that lost a line
    of it (Ray interleaves its actors' output, and a line that another process's
    bytes overwrote is gone): the keys before and after the loss are still placed
    right. A value that spans lines (a long list, a string split in parts) is
    gathered until its brackets close, and read as a Python literal.
    """
    values: dict[str, str] = {}
    open_keys: list[tuple[int, str]] = []  # (column, key) of the keys whose dicts hold this line
    # A value that spans lines: its key, its lines so far, and its bracket depth after them.
    pending: tuple[str, list[str], int] | None = None
    for text in texts:
        if pending is not None:
            key, parts, depth = pending
            parts.append(text)
            depth = _depth_after(text, depth)
            if depth <= 0:
                _put(values, key, "\n".join(parts))
                pending = None
            else:
                pending = (key, parts, depth)
            continue
        at, keyed = len(text) - len(text.lstrip(" ")), False
        while (match := _PPRINT_KEY.match(text, at)) is not None:
            column = match.start() + (1 if text[match.start()] == "{" else 0)
            while open_keys and open_keys[-1][0] >= column:
                open_keys.pop()
            open_keys.append((column, _key_text(match.group(1))))
            at, keyed = match.end(), True
            if not (text.startswith("{", at) and _depth_after(text[at:], 0) > 0):
                break  # a value, not a dict that goes on over the next lines
        if not keyed:
            continue  # the rest of a value already read, or a line damaged beyond reading
        dotted = ".".join(key for _, key in open_keys)
        rest = text[at:]
        depth = _depth_after(rest, 0)
        if depth > 0:
            pending = (dotted, [rest], depth)
        else:
            _put(values, dotted, rest)
    if pending is not None:
        _put(values, pending[0], "\n".join(pending[1]))
    return values


def _key_text(literal: str) -> str:
    value = _literal_text(literal)
    return value if isinstance(value, str) else literal


def _put(values: dict[str, str], dotted: str, text: str) -> None:
    """Record the value pprint wrote as ``text`` (``0.2,``, ``False}},``, ``['a',\n 'b']},``,
    a dict short enough for one line) under ``dotted``: the closing braces of the dicts
    it ends and the comma off; a dict's leaves each under its own dotted key."""
    text = text.strip()
    depth = _depth_after(text, 0)
    while text and (text[-1] == "," or (depth < 0 and text[-1] in "}])")):
        if text[-1] != ",":
            depth += 1
        text = text[:-1].rstrip()
    value = _literal_text(text)
    if isinstance(value, dict) and value:
        values.update(_flatten(value, f"{dotted}."))
    elif value is not None or text == "None":
        values[dotted] = _shown(value)
    else:
        values[dotted] = text  # not a literal (damaged): shown as printed


def _literal_text(text: str) -> object:
    """A Python literal's value, tolerating what ``literal_eval`` refuses: ``inf``,
    ``nan`` and other bare names become their text, calls (``np.float64(0.5)``) theirs."""
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" in a garbled line: no stderr
            warnings.simplefilter("ignore")
            tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return _literal(tree.body)


def _literal(node: ast.expr) -> object:
    if isinstance(node, ast.Dict):
        return {str(_literal(key)) if key is not None else "**": _literal(value)
                for key, value in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float)):
        return -node.operand.value
    return ast.unparse(node)


def _is_config(values: Mapping[str, str]) -> bool:
    """A run's config, not a trainer's metrics dict (TRL prints those flat): keys
    nested under one of the sections a trainer's config has."""
    return any(key.split(".", 1)[0] in _SECTIONS for key in values if "." in key)


def _flatten(value: Mapping[str, object], prefix: str = "") -> Iterator[tuple[str, str]]:
    """A nested dict's leaves, each under its dotted key (an empty dict is a leaf: ``{}``)."""
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


def _yaml_block(lines: list[_Line], first: int) -> tuple[_Found | None, int]:
    """The YAML mapping ``OmegaConf.to_yaml`` printed from ``lines[first]`` on: ``key:``
    opens a nested block (its keys indented under it) or a list (``- item`` lines at
    its own indent), ``key: value`` is a leaf. It ends at the first line that is
    neither (the blank line ``print`` adds after it)."""
    prefix = lines[first].prefix
    values: dict[str, str] = {}
    path: list[tuple[int, str]] = []  # (indent, key) of the open blocks
    header: tuple[int, str] | None = None  # the last ``key:`` line: a block or a list
    items: list[str] = []
    last = first
    for index in range(first, min(len(lines), first + _MAX_CONFIG_LINES)):
        line = lines[index]
        if line.prefix != prefix:
            continue
        item = _YAML_ITEM.match(line.text)
        entry = _YAML_ENTRY.match(line.text)
        if item is not None and header is not None and len(item.group(1)) >= header[0]:
            items.append(_scalar(item.group(2)))
        elif entry is not None and items and header is not None and len(entry.group(1)) > header[0]:
            items[-1] += f", {entry.group(2)}: {_scalar(entry.group(3) or '')}"  # a dict item goes on
        elif entry is not None:
            if header is not None and items:
                values[header[1]] = "[" + ", ".join(items) + "]"
            header, items = None, []
            indent, key, rest = len(entry.group(1)), _unquoted(entry.group(2)), entry.group(3)
            while path and path[-1][0] >= indent:
                path.pop()
            dotted = ".".join([*(name for _, name in path), key])
            if rest is None:
                path.append((indent, key))
                header = (indent, dotted)
            else:
                values[dotted] = _scalar(rest)
        else:
            break
        last = index
    if header is not None and items:
        values[header[1]] = "[" + ", ".join(items) + "]"
    return _Found(values, lines[first].offset, lines[last].end) if _is_config(values) else None, last


def _unquoted(key: str) -> str:
    """A YAML key without the quotes YAML puts on words it would misread (``'n'``, ``'on'``)."""
    return key[1:-1] if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"" else key


def _scalar(text: str) -> str:
    """A YAML or Hydra scalar as :func:`_shown` writes it (quotes off, numbers normalised)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    lowered = text.lower()
    if lowered == "null":
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
    parts, start = [], 0
    for index, char, depth in _structure(text):
        if char == "," and depth == 0:
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
