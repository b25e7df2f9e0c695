"""Themes are data files; every one renders, reads, and keeps its states apart in any terminal.

Instead of stored screenshots, each theme is rendered by the real app on a real
log with a warning and a critical panel, and what was drawn is measured:
which colours the states got, how legible every piece of text is in
truecolor, 256 and 16 colours (what tmux panes mostly get), whether greys stay
grey, and — for the colour-blind theme — how far apart the states stay under
simulated protanopia, deuteranopia and tritanopia.
"""

from __future__ import annotations

import colorsys
import re
import subprocess
import sys
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import pytest
from textual.geometry import Region

from tests.corpus import verl_log
from tests.support import dashboard_on, healthy_then_nan, panel, wait_for
from tests.ui.colours import (
    CVD_KINDS,
    RGB,
    chroma,
    contrast,
    delta_e,
    downgrade,
    palette_index,
    parse,
    simulate,
)
from tui.sources.local_file import LocalFile
from tui.ui.app import RlwatchApp
from tui.ui.appearance import Appearance, AppearanceError, resolve_appearance
from tui.ui.themes import (
    DEFAULT_THEME,
    ThemeError,
    available_themes,
    load_theme,
    load_themes,
    shipped_themes,
    themes_dir,
)

SHIPPED = ["rlwatch-dark", "rlwatch-colorblind", "rlwatch-high-contrast", "rlwatch-light"]
# WCAG asks 3:1 of large text and interface parts, 4.5:1 of body text. The worst text on
# any shipped theme's dashboard (the red CRIT on the header's panel colour) is about 4:1
# in every colour depth; these floors keep it there.
MIN_TEXT_CONTRAST = {"rlwatch-high-contrast": 5.0}
DEFAULT_MIN_TEXT_CONTRAST = 3.5


def theme(name: str):
    return load_theme(themes_dir() / f"{name}.toml")


def test_the_shipped_themes_load_and_the_dark_default_comes_first():
    assert [t.name for t in shipped_themes()] == SHIPPED
    assert (themes_dir() / f"{DEFAULT_THEME}.toml").is_file()
    assert theme(DEFAULT_THEME).dark and not theme("rlwatch-light").dark


def test_a_typo_in_a_theme_is_an_error_naming_the_file(tmp_path):
    bad = tmp_path / "mine.toml"
    bad.write_text('primary = "#123456"\nprimray = "#654321"\n')
    with pytest.raises(ThemeError, match=r"mine\.toml: unknown theme keys primray"):
        load_theme(bad)
    (tmp_path / "broken.toml").write_text("primary = \n")
    with pytest.raises(ThemeError, match="broken.toml"):
        load_themes(tmp_path)


@pytest.mark.parametrize("text", ['primary = "#12345"\n', 'primary = "#123456"\nerror = "reddish"\n',
                                  'primary = "#123456"\n[variables]\nfooter-key-foreground = "nope"\n',
                                  "primary = 12\n"])
def test_a_colour_that_is_not_one_is_caught_when_the_file_loads(tmp_path, text):
    path = tmp_path / "typo.toml"
    path.write_text(text)
    with pytest.raises(ThemeError, match=r"typo\.toml: "):
        load_theme(path)


def test_a_theme_without_a_name_is_named_after_its_file(tmp_path):
    (tmp_path / "plain.toml").write_text('primary = "#123456"\n')
    assert [t.name for t in load_themes(tmp_path)] == ["plain"]


def test_user_themes_are_added_replace_shipped_ones_by_name_and_broken_ones_are_reported(tmp_path):
    (tmp_path / "mine.toml").write_text('primary = "#123456"\n')
    (tmp_path / "dark.toml").write_text('name = "rlwatch-dark"\nprimary = "#FF0000"\n')
    (tmp_path / "broken.toml").write_text('primary = "#123456"\nprimray = "#654321"\n')
    offered = available_themes(tmp_path)
    assert offered.names == [*SHIPPED, "mine"]
    assert offered.themes[0].primary == "#FF0000"  # the user's copy of the default, in its place
    assert list(offered.broken) == ["broken"]
    assert re.fullmatch(r"theme skipped: .*/broken\.toml: unknown theme keys primray",
                        offered.broken["broken"])


# -- what each theme draws ---------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """A run of text one widget drew, in one style; ``owner`` is the widget's id, else its class."""

    owner: str
    text: str
    fg: RGB
    bg: RGB


def drawn(app: RlwatchApp) -> list[Cell]:
    """Every styled run of visible text on the screen, widget by widget."""
    cells = []
    for widget in app.screen.query("*"):
        if not widget.display or not widget.region.area:
            continue
        width, height = widget.outer_size
        for strip in widget.render_lines(Region(0, 0, width, height)):
            for segment in strip:
                style = segment.style
                if (segment.text.strip() and style is not None and style.color is not None
                        and style.color.triplet and style.bgcolor is not None and style.bgcolor.triplet):
                    cells.append(Cell(widget.id or type(widget).__name__, segment.text,
                                      tuple(style.color.triplet), tuple(style.bgcolor.triplet)))
    return cells


def close(one: RGB, colour: str) -> bool:
    """The same colour as the theme's, give or take Textual's rounding."""
    return delta_e(one, parse(colour)) < 2


async def rendered(name: str, tmp_path) -> tuple[RlwatchApp, list[Cell], str]:
    """The dashboard at 80x24 in theme ``name``: entropy warns (it left its band at step 21;
    the KL, above its band since step 11, is a note of the run), the policy loss is nan."""
    log, nan_line = healthy_then_nan(tmp_path)
    log.write_bytes(log.read_bytes() + nan_line)
    app = dashboard_on(LocalFile(log, poll_seconds=0.05),
                     appearance=Appearance(theme=name, themes=shipped_themes()))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: panel(app, "pg_loss").state == "critical"
                       and panel(app, "entropy").state == "warning", "a critical and a warning panel")
        await pilot.pause(0.2)
        return app, drawn(app), app.export_screenshot()


@pytest.mark.parametrize("name", SHIPPED)
async def test_each_theme_colours_the_states_with_its_own_colours(name, tmp_path):
    app, cells, svg = await rendered(name, tmp_path)
    colours = theme(name)
    assert app.theme == name
    critical = [c for c in cells if c.owner == "panel-pg_loss" and c.text[0] in "┏━┃"]
    warning = [c for c in cells if c.owner == "panel-entropy" and c.text[0] in "╭─│"]
    assert critical and all(close(c.fg, colours.error) for c in critical)
    assert warning and all(close(c.fg, colours.warning) for c in warning)
    marks = {c.text.split()[0]: c.fg for c in cells if c.text.startswith(("✖", "▲"))}
    assert close(marks["✖"], colours.error) and close(marks["▲"], colours.warning)
    sparkline = [c.fg for c in cells if c.owner == "HistorySparkline"]
    assert any(close(fg, colours.primary) for fg in sparkline)  # the newest/highest bars
    panels = {c.bg for c in cells if c.owner == "panel-grad_norm"}  # not focused, no state
    assert panels and all(close(bg, colours.surface) for bg in panels)
    # The whole screen exported too, in the theme's colours.
    exported = {parse(hex_colour) for hex_colour in re.findall(r"#[0-9a-fA-F]{6}\b", svg)}
    assert any(close(rgb, colours.error) for rgb in exported) and "CRIT" in svg


@pytest.mark.parametrize("depth", ["truecolor", "256", "16"])
@pytest.mark.parametrize("name", SHIPPED)
async def test_each_theme_keeps_every_text_legible_in_each_colour_depth(name, depth, tmp_path):
    _, cells, _ = await rendered(name, tmp_path)
    minimum = MIN_TEXT_CONTRAST.get(name, DEFAULT_MIN_TEXT_CONTRAST)
    text = [c for c in cells if c.owner != "HistorySparkline" and any(ch.isalnum() for ch in c.text)]
    assert len(text) > 50
    worst = min(text, key=lambda c: contrast(downgrade(c.fg, depth), downgrade(c.bg, depth)))
    ratio = contrast(downgrade(worst.fg, depth), downgrade(worst.bg, depth))
    assert ratio >= minimum, f"{worst.text!r} in {worst.owner}: {ratio:.2f}:1"


@pytest.mark.parametrize("name", SHIPPED)
def test_greys_stay_grey_in_256_colours(name):
    """Rich maps a colour with HLS saturation of 15% or more into the 6x6x6 cube, where a
    slightly blue dark grey becomes navy; the theme's neutrals must reach the grey ramp."""
    colours = theme(name)
    for role in ("background", "surface", "panel", "foreground"):
        original = parse(getattr(colours, role))
        assert chroma(downgrade(original, "256")) <= chroma(original) + 6, role


@pytest.mark.parametrize("depth", ["256", "16"])
@pytest.mark.parametrize("name", SHIPPED)
def test_ok_warning_and_critical_stay_three_colours_in_fewer_colours(name, depth):
    colours = theme(name)
    slots = [palette_index(parse(c), depth) for c in (colours.success, colours.warning, colours.error)]
    assert len(set(slots)) == 3, slots


@pytest.mark.parametrize("kind", CVD_KINDS)
def test_the_colour_blind_theme_keeps_the_states_apart_for_colour_blind_readers(kind):
    colours = theme("rlwatch-colorblind")
    states = [parse(c) for c in (colours.success, colours.warning, colours.error)]
    for one, other in combinations(states, 2):
        assert delta_e(simulate(one, kind), simulate(other, kind)) >= 20
    hue = colorsys.rgb_to_hsv(*(c / 255 for c in states[0]))[0] * 360
    assert 180 <= hue <= 250  # ok is blue: no state rests on a red/green difference


def test_high_contrast_text_reaches_the_enhanced_level():
    colours = theme("rlwatch-high-contrast")
    assert contrast(parse(colours.foreground), parse(colours.background)) >= 7
    for state in (colours.success, colours.warning, colours.error):
        assert contrast(parse(state), parse(colours.surface)) >= 7


# -- choosing and switching ----------------------------------------------------


async def test_the_app_uses_the_dark_default():
    app = dashboard_on(LocalFile(verl_log("032")))
    async with app.run_test(size=(80, 24)):
        assert app.theme == DEFAULT_THEME
        assert app.current_theme.primary == theme(DEFAULT_THEME).primary


async def test_t_cycles_the_offered_themes_and_every_switch_is_remembered(tmp_path):
    remembered: list[str] = []
    mine = load_theme(_write(tmp_path / "mine.toml", 'primary = "#123456"\n'))
    appearance = Appearance(themes=[*shipped_themes(), mine],
                            remember=lambda name: remembered.append(name))
    app = dashboard_on(LocalFile(verl_log("032")), appearance=appearance)
    async with app.run_test(size=(80, 24)) as pilot:
        seen = [app.theme]
        for _ in range(5):
            await pilot.press("t")
            await pilot.pause()
            seen.append(app.theme)
        assert seen == [*SHIPPED, "mine", DEFAULT_THEME]
        app.theme = "textual-dark"  # the command palette's theme picker
        await pilot.pause()
        assert remembered == [*SHIPPED[1:], "mine", DEFAULT_THEME, "textual-dark"]


async def test_a_theme_that_cannot_be_remembered_says_so(tmp_path):
    appearance = Appearance(remember=lambda name: f"theme not remembered: {tmp_path}: read-only")
    app = dashboard_on(LocalFile(verl_log("032")), appearance=appearance)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("t")
        await pilot.pause()
        assert any("not remembered" in str(n.message) for n in app._notifications)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A HOME of its own, so the real ~/.config/rlwatch is neither read nor written."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return tmp_path


def test_the_flag_beats_the_settings_file_which_beats_the_default(home):
    utf8 = {"LANG": "en_US.UTF-8"}
    assert resolve_appearance(None, None, utf8).theme == DEFAULT_THEME
    config = home / ".config" / "rlwatch" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('theme = "rlwatch-light"\n')
    assert resolve_appearance(None, None, utf8).theme == "rlwatch-light"
    assert resolve_appearance("rlwatch-high-contrast", None, utf8).theme == "rlwatch-high-contrast"
    config.write_text('theme = "textual-dark"\n')  # picked in the command palette, remembered
    assert resolve_appearance(None, None, utf8).theme == "textual-dark"
    config.write_text('theme = "gone-now"\n')
    fallback = resolve_appearance(None, None, utf8)
    assert fallback.theme == DEFAULT_THEME and "'gone-now'" in fallback.problems[0]


def test_an_unknown_or_broken_theme_name_is_one_message_listing_the_themes(home):
    themes = home / ".config" / "rlwatch" / "themes"
    themes.mkdir(parents=True)
    _write(themes / "broken.toml", 'primary = "#123456"\nprimray = "#000000"\n')
    with pytest.raises(AppearanceError, match=r"no theme 'nope' \(themes: rlwatch-dark, .*\)"):
        resolve_appearance("nope", None, {})
    with pytest.raises(AppearanceError, match=r"no theme 'broken': theme skipped: .*primray"):
        resolve_appearance("broken", None, {})
    offered = resolve_appearance(None, None, {})  # without --theme: started, with the problem noted
    assert any("broken.toml" in problem for problem in offered.problems)


def test_the_command_line_rejects_an_unknown_theme_before_the_screen_switches(tmp_path):
    done = subprocess.run([str(Path(sys.executable).parent / "rlwatch"), str(verl_log("032")),
                           "--theme", "nope"], capture_output=True, text=True, timeout=60,
                          env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.startswith("rlwatch: no theme 'nope'") and done.stderr.count("\n") == 1
