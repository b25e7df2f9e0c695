"""rlwatch as a user runs it: the installed command in a real tmux, keys sent as keystrokes,
the screen read back with ``capture-pane`` (``-e`` for the colours actually written)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.tmux_session import colour_codes, poll, tmux_session
from tests.support import healthy_then_nan, metric, step_lines
from tests.ui.colours import delta_e, parse
from tui.config import tomllib
from tui.ui.format import format_number
from tui.ui.themes import load_theme, themes_dir

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

PANEL_TITLES = ("train reward", "validation score", "policy loss", "KL to reference", "entropy",
                "grad norm", "response length", "s/it")


def grid_columns(lines: list[str]) -> int:
    """Panels side by side in the first row of panels (top-left corners on one line)."""
    return max(sum(line.count(corner) for corner in "╭┏") for line in lines)


def _edge_kind(chunk: str) -> str | None:
    """One panel's slice of a screen row: top (T), side (S), bottom (B) or, in ASCII where
    top and bottom look alike, edge (E); None if it is no intact part of a box."""
    left, second, right = chunk[0], chunk[1], chunk[-1]
    if (left, right) in (("╭", "╮"), ("┏", "┓")):
        return "T"
    if (left, right) in (("╰", "╯"), ("┗", "┛")):
        return "B"
    if left == right and left in "+#" and second in "-=":
        return "E"
    if left == right and left in "│┃|#" and second == " ":
        return "S"
    return None


def assert_panels_intact(lines: list[str], columns: int, width: int) -> None:
    """Every panel of the grid is a closed box: down each column of panels the rows go
    top edge, sides, bottom edge, again and again, with matching corners at both ends."""
    chunk = width // columns
    kinds = ["" for _ in range(columns)]
    for line in lines:
        padded = line.ljust(width)
        if padded[0] not in "╭│╰┏┃┗+|#":
            continue  # the header, the accelerator line, the footer
        for column in range(columns):
            kind = _edge_kind(padded[column * chunk:(column + 1) * chunk])
            assert kind is not None, f"broken border in column {column}: {line!r}"
            kinds[column] += kind
    for column, sequence in enumerate(kinds):
        assert re.fullmatch(r"(TS+B|ES+E)+", sequence), f"column {column} does not close: {sequence}"


def assert_not_garbled(screen: str) -> None:
    assert "\ufffd" not in screen  # a replacement character: bytes that were not UTF-8
    assert "\x1b" not in screen  # an escape sequence shown instead of obeyed


def rlwatch_env(tmp_path, **extra: str | None) -> dict[str, str | None]:
    """A home of its own (nothing read from or written to the real ~/.config or ~/.cache)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), **extra}


def dashboard_up(session, step: str = "30"):
    """Wait for the dashboard with every panel, the step and a warning."""
    def shown() -> list[str] | None:
        text = session.screen()
        ready = (all(title in text for title in PANEL_TITLES) and f"step {step}" in text
                 and ("WARN" in text) and "waiting for" not in text)
        return text.splitlines() if ready else None
    return poll(shown, 20, f"the dashboard at step {step}")


def test_demo_shows_panels_follows_the_replay_and_quits_on_q(tmp_path):
    with tmux_session() as tmux:
        tmux.start(["demo"], rlwatch_env(tmp_path))

        def demo_up() -> str | None:
            text = tmux.screen()
            shown = ("train reward" in text and "entropy" in text and "s/it" in text
                     and re.search(r"\bstep \d+", text))
            return text if shown else None

        text = poll(demo_up, 20, "the dashboard with panels and a step number")
        assert "critic/score/mean" in text
        first_step = int(re.search(r"\bstep (\d+)", text).group(1))
        assert first_step >= 20  # the replay writes its first steps at once
        # The replay keeps going: a later step appears while we watch.
        poll(lambda: int(re.search(r"\bstep (\d+)", tmux.screen()).group(1)) > first_step, 10,
             "a newer step from the replay")
        assert tmux.display("#{pane_title}").startswith("rlwatch demo ")
        tmux.keys("q")
        ended = poll(lambda: re.search(r"rlwatch-exited=(\d+)", tmux.screen()), 10,
                     "rlwatch to exit on q")
        assert ended.group(1) == "0"


@pytest.mark.parametrize(("term", "colorterm", "depth"), [
    ("tmux-256color", None, "256"),
    ("screen-256color", None, "256"),
    ("screen", None, "16"),
    ("tmux-256color", "truecolor", "truecolor"),
])
def test_panels_values_and_states_in_each_terminal(tmp_path, term, colorterm, depth):
    log, _ = healthy_then_nan(tmp_path)
    last = step_lines(30)[-1]
    with tmux_session() as tmux:
        tmux.start([str(log)], rlwatch_env(tmp_path, TERM=term, COLORTERM=colorterm))
        lines = dashboard_up(tmux)
        screen = "\n".join(lines)
        assert_not_garbled(screen)
        assert_panels_intact(lines, 2, 80)
        assert format_number(metric(last, "critic/score/mean")) in screen
        assert format_number(metric(last, "actor/kl_loss")) in screen
        assert "▲ WARN entropy-low" in screen and "warnings" in screen  # the KL: a note by step 30
        # The footer made it onto an 80x24 screen (the key bar is rebuilt as keys come and go:
        # a loaded machine's capture can fall between)
        poll(lambda: "q Quit" in tmux.screen(), 10, "the footer")
        colours = colour_codes(tmux.screen(colours=True))
        eight_bit = [c for c in colours if c[1:2] == ("5",)]
        true_colour = [c for c in colours if c[1:2] == ("2",)]
        if depth == "16":
            assert colours and not eight_bit and not true_colour
        elif depth == "256":
            assert eight_bit and not true_colour
        else:
            assert true_colour


def test_a_critical_finding_titles_the_window_and_rings_the_bell(tmp_path):
    log, nan_line = healthy_then_nan(tmp_path)
    with tmux_session() as tmux:
        tmux.start([str(log)], rlwatch_env(tmp_path), before="printf '\\033]2;my shell\\007'; ")
        dashboard_up(tmux)
        title = poll(lambda: (shown := tmux.display("#{pane_title}")).startswith("rlwatch ")
                     and "WARN" in shown and shown, 5, "rlwatch's title")
        assert re.fullmatch(rf"rlwatch {tmp_path.name}/grpo 30 reward [\d.]+ ▲ WARN [\w-]+( \+\d+)?",
                            title), title
        assert tmux.display("#{window_bell_flag}") == "0"
        with open(log, "ab") as handle:
            handle.write(nan_line)
        poll(lambda: "✖ CRIT loss-nan" in tmux.display("#{pane_title}"), 10, "CRIT in the title")
        assert " 31 " in tmux.display("#{pane_title}")
        poll(lambda: tmux.display("#{window_bell_flag}") == "1", 5, "tmux to mark the bell")
        tmux.keys("q")
        poll(lambda: "rlwatch-exited=0" in tmux.screen(), 10, "rlwatch to exit on q")
        assert tmux.display("#{pane_title}") == "my shell"  # the shell's title is back


def test_resizing_the_window_and_pane_relays_out_at_once(tmp_path):
    log, _ = healthy_then_nan(tmp_path)
    with tmux_session() as tmux:
        tmux.start([str(log)], rlwatch_env(tmp_path))
        lines = dashboard_up(tmux)
        assert grid_columns(lines) == 2

        def laid_out(columns: int, width: int):
            def check():
                now = tmux.lines()
                if grid_columns(now) != columns or not any("train reward" in line for line in now):
                    return None
                try:
                    assert_panels_intact(now, columns, width)
                except AssertionError:
                    return None  # captured mid-redraw: look again until poll's deadline
                return now
            return check

        tmux("resize-window", "-t", "t", "-x", "160", "-y", "40")
        wide = poll(laid_out(4, 160), 2, "four columns of panels at 160x40")
        assert len(wide) == 40
        tmux("split-window", "-v", "-t", "t", "sleep 60")  # the pane halves in height
        tmux("select-pane", "-t", "t.0")
        poll(lambda: int(tmux.display("#{pane_height}")) < 25 and laid_out(4, 160)(), 2,
             "the grid re-laid-out in the half-height pane")
        tmux("resize-pane", "-Z", "-t", "t.0")  # zoom: the pane gets the whole window again
        poll(lambda: tmux.display("#{window_zoomed_flag}") == "1" and len(tmux.lines()) == 40
             and laid_out(4, 160)(), 2, "the zoomed pane filled")
        tmux("resize-pane", "-Z", "-t", "t.0")
        tmux("kill-pane", "-t", "t.1")
        tmux("resize-window", "-t", "t", "-x", "80", "-y", "24")
        poll(laid_out(2, 80), 2, "two columns again at 80x24")


@pytest.mark.parametrize("how", ["--ascii", "LANG=C"])
def test_ascii_mode_draws_only_ascii(tmp_path, how):
    log, nan_line = healthy_then_nan(tmp_path)
    log.write_bytes(log.read_bytes() + nan_line)
    args, env = ([str(log), "--ascii"], {}) if how == "--ascii" else ([str(log)], {"LANG": "C"})
    with tmux_session() as tmux:
        tmux.start(args, rlwatch_env(tmp_path, **env))
        lines = poll(lambda: (text := tmux.screen()) and "X CRIT loss-nan" in text
                     and text.splitlines(), 20, "the dashboard in ASCII")
        screen = "\n".join(lines)
        assert screen.isascii(), [line for line in lines if not line.isascii()]
        assert "! WARN entropy-low" in screen
        assert_panels_intact(lines, 2, 80)
        assert re.search(r"#=+ actor/pg_loss =#", screen)  # the critical panel's heavy border
        poll(lambda: "X CRIT loss-nan" in tmux.display("#{pane_title}"), 5, "the title in ASCII")


def test_unicode_overrides_an_ascii_locale(tmp_path):
    log, _ = healthy_then_nan(tmp_path)
    with tmux_session() as tmux:
        tmux.start([str(log), "--unicode"], rlwatch_env(tmp_path, LANG="C"))
        screen = "\n".join(dashboard_up(tmux))
        assert "╭─ train reward" in screen and "▲ WARN" in screen


def test_no_color_leaves_only_greys_and_the_words(tmp_path):
    log, nan_line = healthy_then_nan(tmp_path)
    log.write_bytes(log.read_bytes() + nan_line)
    with tmux_session() as tmux:
        tmux.start([str(log)], rlwatch_env(tmp_path, NO_COLOR="1", COLORTERM="truecolor"))
        poll(lambda: "✖ CRIT loss-nan" in tmux.screen(), 20, "the critical panel")
        colours = colour_codes(tmux.screen(colours=True))
        hues = [c for c in colours if c[1:2] == ("2",) and len(set(c[2:])) > 1]
        assert colours and not hues, hues[:5]
        assert "┏" in tmux.screen()  # critical still stands out: a heavy border, and the words


def theme_colour_shown(tmux, colour: str, layer: str = "38") -> bool:
    """Whether ``colour`` was written as a truecolor foreground (38) or background (48)."""
    written = [tuple(int(v) for v in c[2:]) for c in colour_codes(tmux.screen(colours=True))
               if c[:2] == (layer, "2")]
    return any(delta_e(rgb, parse(colour)) < 3 for rgb in written)


def test_t_switches_the_theme_and_the_next_start_remembers_it(tmp_path):
    log, nan_line = healthy_then_nan(tmp_path)
    log.write_bytes(log.read_bytes() + nan_line)
    env = rlwatch_env(tmp_path, COLORTERM="truecolor")
    light = load_theme(themes_dir() / "rlwatch-light.toml")
    config = tmp_path / "home" / ".config" / "rlwatch" / "config.toml"
    with tmux_session() as tmux:
        tmux.start([str(log)], env)
        poll(lambda: "✖ CRIT" in tmux.screen(), 20, "the dashboard")
        assert not theme_colour_shown(tmux, light.background, "48")
        for _ in range(3):  # dark -> colour-blind -> high contrast -> light
            tmux.keys("t")
        poll(lambda: theme_colour_shown(tmux, light.background, "48"), 5, "the light theme's background")
        poll(lambda: config.exists() and tomllib.loads(config.read_text()).get("theme")
             == "rlwatch-light", 5, "the choice in config.toml")
        tmux.keys("q")
        poll(lambda: "rlwatch-exited=0" in tmux.screen(), 10, "rlwatch to exit")
    with tmux_session() as tmux:
        tmux.start([str(log)], env)
        poll(lambda: "✖ CRIT" in tmux.screen() and theme_colour_shown(tmux, light.error), 20,
             "the remembered light theme on the next start")


def test_a_user_theme_by_name_and_one_line_for_a_broken_one(tmp_path):
    log, nan_line = healthy_then_nan(tmp_path)
    log.write_bytes(log.read_bytes() + nan_line)
    env = rlwatch_env(tmp_path, COLORTERM="truecolor")
    themes = tmp_path / "home" / ".config" / "rlwatch" / "themes"
    themes.mkdir(parents=True)
    (themes / "mine.toml").write_text('primary = "#4FB0E8"\nerror = "#FF00FF"\n'
                                      'background = "#000000"\nsurface = "#000000"\n')
    (themes / "broken.toml").write_text('primary = "#4FB0E8"\nprimray = "#000000"\n')
    with tmux_session() as tmux:
        tmux.start([str(log), "--theme", "mine"], env, width=120, height=30)
        poll(lambda: "✖ CRIT" in tmux.screen() and theme_colour_shown(tmux, "#FF00FF"), 20,
             "the user's critical colour")
        # One notice naming the file and what is wrong with it, wrapped to the toast's width
        # (a long path breaks anywhere, so the words are compared without the spaces).
        def notice() -> str:
            toast = [line.split("▌", 1)[1] for line in tmux.lines() if "▌" in line]
            return "".join("".join(toast).replace("│", "").split())

        poll(lambda: re.search(r"themeskipped:\S*/themes/broken\.toml:unknownthemekeysprimray",
                               notice()), 5, "the notice about the broken theme")
        assert "rlwatch-exited" not in tmux.screen()  # and no crash


def test_a_killed_tmux_ends_rlwatch_and_removes_the_demos_log(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    with tmux_session() as tmux:
        # With PYTHONUNBUFFERED (set in many ML images), Textual's shutdown blocked for ever
        # on the dead terminal and rlwatch outlived its tmux.
        tmux.start(["demo"], {**rlwatch_env(tmp_path), "TMPDIR": str(scratch),
                              "PYTHONUNBUFFERED": "1"})
        poll(lambda: "train reward" in tmux.screen(), 20, "the demo's dashboard")
        shell = tmux.display("#{pane_pid}")
        rlwatch = poll(lambda: subprocess.run(["pgrep", "-P", shell], capture_output=True,
                                              text=True).stdout.split(), 5, "rlwatch's pid")[0]
        assert list(scratch.glob("rlwatch-demo-*"))  # the replayed log is there while it runs
        tmux.kill()  # the terminal goes away: SIGHUP
        poll(lambda: not Path(f"/proc/{rlwatch}").exists(), 10, "rlwatch to end after the hang-up")
    assert not list(scratch.glob("rlwatch-demo-*"))
