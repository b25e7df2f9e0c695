"""How the dashboard looks: which theme, which themes ``t`` cycles through, ASCII or not.

The command line, the settings file and the locale each have a say; this is
where their order is decided (a flag beats the settings file, which beats
the default), so the app itself only applies the result.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from textual.theme import BUILTIN_THEMES, Theme

from tui.config import load_config, save_theme
from tui.ui.glyphs import use_ascii
from tui.ui.themes import DEFAULT_THEME, available_themes, shipped_themes


class AppearanceError(Exception):
    """A ``--theme`` that names no usable theme; the message lists the ones there are."""


@dataclass
class Appearance:
    """What :class:`~tui.ui.app.RlwatchApp` needs to look right.

    The default (shipped themes, dark, Unicode, nothing remembered) touches
    no user file, which is what tests and embedding want.
    """

    theme: str = DEFAULT_THEME
    themes: list[Theme] = field(default_factory=shipped_themes)
    ascii: bool = False
    # Called with the new theme's name when the user switches; returns a problem to show.
    remember: Callable[[str], str | None] | None = None
    # Lines to show once the dashboard is up (a broken user theme or settings file).
    problems: list[str] = field(default_factory=list)


def resolve_appearance(theme: str | None, ascii_only: bool | None,
                       environ: Mapping[str, str] = os.environ) -> Appearance:
    """The appearance for this run from ``--theme`` and ``--ascii``/``--unicode`` (None:
    not given), the settings file, the user's theme files and the locale."""
    config = load_config()
    offered = available_themes()
    problems = [problem for problem in [config.problem, *offered.broken.values()] if problem]
    # Textual's own themes can be picked in the command palette (ctrl+p), so they are
    # remembered too and must be accepted back; ``t`` cycles only the offered ones.
    known = [*offered.names, *BUILTIN_THEMES]
    if theme is not None and theme not in known:
        reason = f": {offered.broken[theme]}" if theme in offered.broken else ""
        raise AppearanceError(f"no theme {theme!r}{reason} (themes: {', '.join(offered.names)})")
    chosen = theme or config.theme or DEFAULT_THEME
    if chosen not in known:
        problems.append(f"theme {chosen!r} from the settings file is gone; using {DEFAULT_THEME}")
        chosen = DEFAULT_THEME
    return Appearance(chosen, offered.themes, use_ascii(ascii_only, config.ascii, environ), save_theme,
                      problems)
