"""What a verl console log says about the run's other loggers.

A run directory often holds the files of many experiments
(``tensorboard_log/<project>/<experiment>`` accumulates run after run), and
merging another experiment's "exact" values into this run would silently
replace the right ones. So the files are taken only where this log points:
verl announces them (``Creating file logger at …``, ``Saving tensorboard log
to ….``), and its config dump names the loggers in use, the project and the
experiment (VERL_FORMATS.md §2, §3, §10).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

_JSONL_AT = re.compile(r"Creating file logger at (.+?)\s*$", re.MULTILINE)
_TENSORBOARD_AT = re.compile(r"Saving tensorboard log to (.+?)\.\s*$", re.MULTILINE)
# The config pprint (``'project_name': 'x',``) or a Hydra override on the
# echoed command line (``trainer.project_name=x``).
_NAME = r"(?:'{key}': '([^'\n]+)'|trainer\.{key}=['\"]?([^'\"\s]+))"
_PROJECT = re.compile(_NAME.format(key="project_name"))
_EXPERIMENT = re.compile(_NAME.format(key="experiment_name"))
# ``'logger': ['console',\n 'tensorboard'],`` (pprint may wrap the list) or
# ``trainer.logger=["console","file"]`` / ``trainer.logger=['console']``.
_LOGGERS = re.compile(r"(?:'logger': |trainer\.logger=)\[([^\]]*)\]")
_LOGGER_NAME = re.compile(r"""['"](\w+)['"]|(?<=[\[,])\s*(\w+)\s*(?=[\],])""")
# Fixed strings on every line the patterns above read (for a grep on the box).
HINT_NEEDLES = ("logger", "project_name", "experiment_name", "Saving tensorboard log to")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True, slots=True)
class LoggerHints:
    """What the log says; None where it says nothing (a log excerpt, an old version)."""

    jsonl: str | None = None
    tensorboard: str | None = None
    project: str | None = None
    experiment: str | None = None
    loggers: frozenset[str] | None = None

    def uses(self, logger: str) -> bool | None:
        """Whether the run logs to ``logger`` ("file", "tensorboard"); None if unknown."""
        return None if self.loggers is None else logger in self.loggers

    def jsonl_paths(self) -> list[PurePath]:
        """Where the JSONL may be, relative to the trainer's working directory, best first."""
        paths = [PurePath(self.jsonl)] if self.jsonl else []
        if self.project and self.experiment:
            paths.append(PurePath(self.project, f"{self.experiment}.jsonl"))
        return paths

    def tensorboard_paths(self) -> list[PurePath]:
        """Where the event files may be, relative to the trainer's working directory, best first."""
        paths = [PurePath(self.tensorboard)] if self.tensorboard else []
        if self.project and self.experiment:
            paths.append(PurePath("tensorboard_log", self.project, self.experiment))
        return paths


def logger_hints(text: str) -> LoggerHints:
    """Read the hints from console text (the head and tail of a log); the last mention wins,
    as a log that a restarted run appended to describes the newest run last."""
    text = _ANSI.sub("", text)
    return LoggerHints(
        jsonl=_last(_JSONL_AT, text),
        tensorboard=_last(_TENSORBOARD_AT, text),
        project=_last(_PROJECT, text),
        experiment=_last(_EXPERIMENT, text),
        loggers=_loggers(text),
    )


def _last(pattern: re.Pattern[str], text: str) -> str | None:
    found = None
    for match in pattern.finditer(text):
        found = next(group for group in match.groups() if group is not None)
    return found.strip() if found else None


def _loggers(text: str) -> frozenset[str] | None:
    listed = _last(_LOGGERS, text)
    if listed is None:
        return None
    return frozenset(a or b for a, b in _LOGGER_NAME.findall(f"[{listed}]"))
