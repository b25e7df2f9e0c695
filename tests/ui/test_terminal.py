"""Living in a terminal multiplexer: ASCII stand-ins, the locale rule, the window title,
and keys that leave tmux's own alone. (The same, end to end in a real tmux: tests/e2e.)"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import statistics
import threading
import time

import pytest
from rich.cells import cell_len
from textual.app import App
from textual.binding import Binding

import tui.ui.screens
import tui.ui.widgets
from tests.corpus import verl_log
from tests.support import RecordingDriver, dashboard_on, healthy_then_nan, step_lines, wait_for
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import LogScanner
from tui.rules.findings import Finding, Severity
from tui.session.run_session import RunSession
from tui.sources.local_file import LocalFile
from tui.ui.app import RlwatchApp
from tui.ui.glyphs import BAR_LEVELS, locale_is_utf8, to_ascii, use_ascii
from tui.ui.health import MUTED_MARK, STATE_MARK
from tui.ui.run_line import run_line, run_name, state_words
from tui.ui.terminal import RESTORE_TITLE, SAVE_TITLE, PromptEscape, clean_title, rlwatch_driver

# -- ASCII -------------------------------------------------------------------

BOX_AND_BLOCKS = [chr(code) for code in range(0x2500, 0x25A0)]


def test_every_box_drawing_and_block_character_has_a_one_cell_ascii_stand_in():
    for char in BOX_AND_BLOCKS:
        replaced = to_ascii(char)
        assert replaced.isascii() and replaced.isprintable() and cell_len(replaced) == cell_len(char), \
            (char, replaced)


def test_what_rlwatch_and_textual_draw_reads_in_ascii():
    assert [to_ascii(mark) for mark in [*STATE_MARK.values(), MUTED_MARK]] == [
        "X CRIT", "! WARN", ". note", "+ ok", "- muted"]
    assert to_ascii("▁▂▃▄▅▆▇█") == BAR_LEVELS
    assert to_ascii("╭─ KL ─╮│┃╰─╯") == "+- KL -+|#+-+"
    assert to_ascii("┏━ loss ━┓┃┗━┛") == "#= loss =###=#"  # a critical panel stays distinct
    assert to_ascii("0.255‥0.883  Δ +0.02  ≈1h03m  waiting…  ▏^p palette") == \
        "0.255:0.883  d +0.02  ~1h03m  waiting.  |^p palette"


def test_a_line_charts_braille_reads_as_a_line_in_ascii():
    """Each braille cell becomes the one mark nearest its dots, one cell wide: the top, the
    middle or the bottom of the cell, or a line running through it."""
    for code in range(0x2800, 0x2900):
        replaced = to_ascii(chr(code))
        assert len(replaced) == 1 and replaced.isascii() and replaced.isprintable(), hex(code)
    assert to_ascii("⠉⠒⠤⣀⡇⣿\u2800") == "'--.|| "


def test_other_text_keeps_its_width_so_columns_do_not_move():
    assert to_ascii("café") == "cafe"
    assert to_ascii("训练 log") == "???? log"  # two cells each
    assert to_ascii("e\u0301") == "e"  # a combining accent adds no cell
    assert to_ascii("plain ascii") == "plain ascii"


@pytest.mark.parametrize(("environ", "utf8"), [
    ({"LANG": "en_US.UTF-8"}, True),
    ({"LANG": "de_DE.utf8"}, True),
    ({"LANG": "C"}, False),
    ({}, False),
    ({"LANG": "en_US.ISO-8859-1"}, False),
    ({"LC_ALL": "C", "LANG": "en_US.UTF-8"}, False),  # LC_ALL first, as tmux does
    ({"LC_CTYPE": "en_US.UTF-8", "LANG": "C"}, True),
    # What Python leaves after coercing a C locale (PEP 538): the user said nothing.
    ({"LC_CTYPE": "C.UTF-8"}, False),
    ({"LC_CTYPE": "C.UTF-8", "LANG": "en_GB.UTF-8"}, True),
    ({"LC_ALL": "C.UTF-8"}, True),
])
def test_the_locale_says_utf8_the_way_tmux_decides(environ, utf8):
    assert locale_is_utf8(environ) is utf8


def test_ascii_the_flag_then_the_settings_then_the_locale():
    assert use_ascii(True, False, {"LANG": "en_US.UTF-8"}) is True
    assert use_ascii(False, True, {"LANG": "C"}) is False
    assert use_ascii(None, True, {"LANG": "en_US.UTF-8"}) is True
    assert use_ascii(None, None, {"LANG": "C"}) is True
    assert use_ascii(None, None, {"LANG": "en_US.UTF-8"}) is False


# -- the driver: title and translation -----------------------------------------


def test_the_title_saves_the_shells_title_first_and_restores_it_on_exit():
    driver = rlwatch_driver(RecordingDriver, ascii_only=False)()
    driver.set_title("rlwatch cola 3 ✓ ok")
    driver.set_title("rlwatch cola 4 ✓ ok")
    driver.stop_application_mode()
    assert driver.written == [SAVE_TITLE, "\x1b]2;rlwatch cola 3 ✓ ok\x07", "\x1b]2;rlwatch cola 4 ✓ ok\x07",
                              RESTORE_TITLE]
    assert driver.stopped


def test_ascii_mode_translates_everything_written_including_the_title():
    driver = rlwatch_driver(RecordingDriver, ascii_only=True)()
    driver.write("\x1b[38;5;74m▁▃█\x1b[0m")
    driver.set_title("rlwatch cola 4 ✖ CRIT loss-nan")
    assert driver.written == ["\x1b[38;5;74m_-#\x1b[0m", SAVE_TITLE, "\x1b]2;rlwatch cola 4 X CRIT loss-nan\x07"]


def test_a_title_cannot_smuggle_terminal_commands():
    hostile = "run\x07\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b"
    assert clean_title(hostile) == "run␇␛]52;c;cm0gLXJmIH4=␇␛[2J\\x9b"  # shown, inert
    assert clean_title("a\u2028b\nc") == "ab␊c"


# -- the one-line summary ---------------------------------------------------------


@pytest.mark.parametrize(("label", "name"), [
    ("/runs/cola/train.log", "cola/train"),
    ("gpu:/runs/cola/train.log", "cola/train"),
    ("grpo.log", "grpo"),
    ("/var/log/x", "log/x"),
    ("raysubmit_a1 on http://head:8265", "raysubmit_a1"),
    ("rlw-ok on ray://head (its port 8265, over SSH)", "rlw-ok"),
    ("/runs/a on b/train.log", "a on b/train"),
    ("gpu:/runs/sw/grpo_qwen2.5-7b_gsm8k_lr1e-6_kl0.001", "sw/grpo_qwen2.5-7b_gsm8k_lr1e-6_kl0.001"),
    ("/runs/tb/events.jsonl", "tb/events"),
])
def test_a_run_is_named_by_its_directory_and_log(label, name):
    assert run_name(label) == name


def finding(rule: str, severity: Severity) -> Finding:
    made = Finding(rule, severity)
    made.add_hit(1, None, "")
    return made


def test_the_state_is_the_worst_with_its_first_rule_and_how_many_more():
    assert state_words([]) == "✓ ok"
    assert state_words([finding("kl-high", Severity.WARNING), finding("entropy-low", Severity.WARNING)]) == \
        "▲ WARN kl-high +1"
    assert state_words([finding("loss-nan", Severity.CRITICAL), finding("kl-high", Severity.WARNING),
                        finding("loss-nan", Severity.CRITICAL)]) == "✖ CRIT loss-nan"


def test_the_line_has_step_total_and_reward():
    model = RunModel("x")
    assert run_line("cola", model, []) == "cola waiting for a step ✓ ok"
    lines = step_lines(3)
    scanner = LogScanner()
    model.apply(scanner.feed(b"Total training steps: 120\n" + b"".join(lines)) + scanner.finish(), 0.0)
    assert run_line("cola", model, []).startswith("cola 3/120 reward ")


async def test_a_run_that_crashed_before_its_first_step_waits_for_none():
    session = RunSession(LocalFile(verl_log("018")))  # CUDA out of memory before step 1
    await session.load()
    line = run_line("cola", session.model, session.judge())
    await session.close()
    assert line.startswith("cola no step ✖ CRIT crash: torch.OutOfMemoryError"), line


async def test_the_app_titles_the_window_with_the_run_step_and_worst_state(tmp_path):
    log, nan_line = healthy_then_nan(tmp_path)
    app = dashboard_on(LocalFile(log, poll_seconds=0.05))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: " 30 " in app.title and "▲ WARN" in app.title, "a warning title")
        assert app.title.startswith(f"rlwatch {tmp_path.name}/grpo 30 reward ")
        with open(log, "ab") as handle:
            handle.write(nan_line)
        await wait_for(pilot, lambda: " 31 reward " in app.title and app.title.endswith(" ✖ CRIT loss-nan"),
                       "the critical title")


# -- keys: tmux's are tmux's ---------------------------------------------------------


def binding_keys(bindings) -> set[str]:
    keys = set()
    for binding in bindings:
        key = binding.key if isinstance(binding, Binding) else binding[0]
        keys.update(part.strip() for part in key.split(","))
    return keys


def ui_classes() -> list[type]:
    """Every class defined in rlwatch's screens and widgets."""
    found = [RlwatchApp]
    for package in (tui.ui.screens, tui.ui.widgets):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            found += [value for value in vars(module).values()
                      if inspect.isclass(value) and value.__module__ == module.__name__]
    return found


def test_no_key_of_rlwatch_or_textual_takes_tmuxs_prefix():
    """ctrl+b is tmux's prefix (ctrl+a screen's): rlwatch must never bind them."""
    for owner in [App, *ui_classes()]:
        keys = binding_keys(getattr(owner, "BINDINGS", []))
        assert not keys & {"ctrl+b", "ctrl+a"}, owner


async def test_every_screen_reached_by_keys_leaves_ctrl_b_alone():
    app = dashboard_on(LocalFile(verl_log("032")))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.model.last_step is not None, "the run")
        for key in ("s", "f", "?"):
            await pilot.press(key)
            await pilot.pause()
            assert "ctrl+b" not in app.screen.active_bindings, type(app.screen).__name__
            await pilot.press("escape")
            await pilot.pause()
        assert "ctrl+b" not in app.screen.active_bindings


# -- esc --------------------------------------------------------------------

class KeyReader(PromptEscape):
    """PromptEscape's input loop on one end of a pipe, noting when each key arrives."""

    def __init__(self, fileno: int) -> None:
        self.fileno = fileno
        self.exit_event = threading.Event()
        self._debug = False
        self.keys: list[tuple[float, str]] = []

    def process_message(self, event) -> None:
        self.keys.append((time.perf_counter(), getattr(event, "key", "")))


def test_a_lone_esc_is_a_key_once_escdelay_passes_not_at_the_next_100_ms_poll():
    from textual import constants

    read_end, write_end = os.pipe()
    reader = KeyReader(read_end)
    thread = threading.Thread(target=reader.run_input_thread, daemon=True)
    thread.start()
    waits = []
    try:
        for _ in range(5):
            time.sleep(0.15)
            start = time.perf_counter()
            os.write(write_end, b"\x1b")
            deadline = start + 2
            while not reader.keys and time.perf_counter() < deadline:
                time.sleep(0.002)
            arrived, key = reader.keys.pop()
            assert key == "escape"
            waits.append(arrived - start)
        os.write(write_end, b"\x1b[A")  # an arrow's sequence is still one key, not esc
        time.sleep(0.15)
        assert [key for _, key in reader.keys] == ["up"]
    finally:
        reader.exit_event.set()
        thread.join(1)
        os.close(read_end)
        os.close(write_end)
    assert statistics.median(waits) < constants.ESCAPE_DELAY + 0.04  # Textual's own loop: ~0.1 s
