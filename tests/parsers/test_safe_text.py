"""safe_text: log text can never drive a terminal, and what it tried is visible.

DESIGN.md, "Log text is untrusted". Every output passes log-derived text
through this one function; these tests pin down its visible form.
"""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.parsers.text import decode, safe_data, safe_text

ESC, BEL, ST = "\x1b", "\x07", "\x1b\\"


def _terminal_active(char: str, multiline: bool) -> bool:
    code = ord(char)
    if char == "\n":
        return not multiline
    return code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF


def _assert_inert(text: str, multiline: bool = False) -> None:
    bad = [hex(ord(c)) for c in text if _terminal_active(c, multiline)]
    assert bad == [], f"control characters left in {text!r}"


def test_plain_text_is_returned_unchanged():
    for text in ("step:1 - critic/score/mean:0.5", "温度 42 °C — ok", "[bold]x[/bold]", ""):
        assert safe_text(text) == text
        assert safe_text(text, multiline=True) == text


@pytest.mark.parametrize("code", [c for c in range(0x20) if c not in (0x09, 0x0A)])
def test_every_c0_control_becomes_its_control_picture(code):
    assert safe_text(f"a{chr(code)}b") == f"a{chr(0x2400 + code)}b"
    assert safe_text(f"a{chr(code)}b", multiline=True) == f"a{chr(0x2400 + code)}b"


def test_newline_is_kept_only_in_multiline_text():
    assert safe_text("a\nb", multiline=True) == "a\nb"
    assert safe_text("a\nb") == "a\u240ab"  # ␊
    assert safe_text("a\r\nb", multiline=True) == "a\nb"
    assert safe_text("a\r\nb") == "a\u240d\u240ab"  # ␍␊


def test_tabs_become_spaces_to_the_next_stop():
    assert safe_text("a\tb") == "a       b"
    assert safe_text("ab\tc", tabsize=4) == "ab  c"
    assert safe_text("x\n\ty", multiline=True) == "x\n        y"


def test_del_is_shown():
    assert safe_text("a\x7fb") == "a\u2421b"  # ␡


@pytest.mark.parametrize("code", range(0x80, 0xA0))
def test_every_c1_control_is_shown_as_a_hex_escape(code):
    assert safe_text(f"a{chr(code)}b") == f"a\\x{code:02x}b"


@pytest.mark.parametrize("code", [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
def test_every_bidi_control_is_shown_as_a_unicode_escape(code):
    # An override or isolate reorders what a bidi-aware terminal shows ("Trojan Source").
    assert safe_text(f"a{chr(code)}b") == f"a\\u{code:04x}b"
    assert safe_text(f"a{chr(code)}\nb", multiline=True) == f"a\\u{code:04x}\nb"


def test_right_to_left_text_itself_is_kept():
    assert safe_text("مرحبا שלום") == "مرحبا שלום"


def test_sgr_colour_codes_are_removed_silently():
    assert safe_text(f"{ESC}[2m{ESC}[36m(main_task pid=1){ESC}[0m step:1") == "(main_task pid=1) step:1"
    assert safe_text(f"{ESC}[38:2:255:0:0mred{ESC}[m") == "red"
    assert safe_text(f"{ESC}[1;31mx{ESC}[0m", multiline=True) == "x"


def test_osc_title_with_bel_terminator_is_shown_inert():
    assert safe_text(f"before{ESC}]0;pwned{BEL}after") == "before␛]0;pwned␇after"
    assert safe_text(f"{ESC}]2;pwned{BEL}") == "␛]2;pwned␇"


def test_osc_with_st_terminator_is_shown_inert():
    assert safe_text(f"{ESC}]2;pwned{ST}x") == "␛]2;pwned␛\\x"


def test_osc52_clipboard_and_osc8_link_are_shown_inert():
    assert safe_text(f"{ESC}]52;c;cm0gLXJmIH4={BEL}") == "␛]52;c;cm0gLXJmIH4=␇"
    assert (safe_text(f"{ESC}]8;;https://evil.example{ST}click{ESC}]8;;{ST}")
            == "␛]8;;https://evil.example␛\\click␛]8;;␛\\")


def test_dcs_apc_pm_sos_are_shown_inert():
    for introducer in "P_^X":  # DCS, APC, PM, SOS
        out = safe_text(f"{ESC}{introducer}payload{ST}")
        assert out == f"␛{introducer}payload␛\\"
        _assert_inert(out)


def test_csi_other_than_sgr_is_shown_including_intermediates():
    assert safe_text(f"{ESC}[2J{ESC}[H") == "␛[2J␛[H"  # clear screen, cursor home
    assert safe_text(f"{ESC}[0 q") == "␛[0 q"  # intermediate byte (cursor shape)
    assert safe_text(f"{ESC}[?1049h") == "␛[?1049h"  # alternate screen
    assert safe_text(f"{ESC}[22;0t") == "␛[22;0t"  # title stack


def test_eight_bit_c1_sequences_are_shown():
    assert safe_text("\x9b2J") == "\\x9b2J"  # 8-bit CSI
    assert safe_text("\x9d0;t\x9c") == "\\x9d0;t\\x9c"  # 8-bit OSC … ST
    assert safe_text("\x9b31m") == "\\x9b31m"  # an 8-bit SGR is not silently dropped


def test_incomplete_sequences_at_the_end_are_shown():
    assert safe_text(f"text{ESC}") == "text␛"
    assert safe_text(f"text{ESC}[") == "text␛["
    assert safe_text(f"text{ESC}]0;unterminated title") == "text␛]0;unterminated title"
    assert safe_text(f"text{ESC}[31") == "text␛[31"


def test_removing_sgr_cannot_assemble_a_new_sequence():
    # ESC + (SGR) + "]0;x BEL": once the SGR goes, ESC meets "]" — still shown.
    assert safe_text(f"{ESC}{ESC}[0m]0;x{BEL}") == "␛]0;x␇"


def test_invalid_utf8_already_replaced_stays_replaced():
    text = decode(b"a\xff\x9b2J\xc2\x9b2J")  # a raw 0x9b byte is invalid; U+009B (c2 9b) is C1
    assert safe_text(text) == "a\ufffd\ufffd2J\\x9b2J"


def test_lone_surrogates_are_replaced():
    assert safe_text("a\udc9bb") == "a\ufffdb"


def test_markup_is_left_as_text_for_the_caller_to_show_literally():
    assert safe_text("[bold]x[/] [link=http://e]y[/link]") == "[bold]x[/] [link=http://e]y[/link]"


def test_safe_data_cleans_keys_and_values_and_keeps_everything_else():
    data = {"k\x1b]0;t\x07": ["v\x9b", 1, None, 2.5, True, {"n": "a\nb"}]}
    assert safe_data(data) == {"k␛]0;t␇": ["v\\x9b", 1, None, 2.5, True, {"n": "a\nb"}]}


def test_json_of_safe_data_has_no_raw_c1():
    out = json.dumps(safe_data({"m": "\x9b2J \x1b]0;t\x07"}), ensure_ascii=False)
    _assert_inert(out)
    assert json.loads(out) == {"m": "\\x9b2J ␛]0;t␇"}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=200),
       st.booleans())
def test_no_control_character_survives(text, multiline):
    _assert_inert(safe_text(text, multiline=multiline), multiline)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["\x1b", "[", "]", "0", ";", "2", "J", "m", "\x07", "\x9b", "\\",
                                 "P", "\n", "\r", "\t", "a", "\x7f", "\x00", "\x9c"]), max_size=60))
def test_no_control_character_survives_escape_soup(parts):
    text = "".join(parts)
    _assert_inert(safe_text(text))
    _assert_inert(safe_text(text, multiline=True), multiline=True)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x10FFFF,
                                      exclude_categories=("Cs", "Cc")), max_size=100))
def test_text_without_controls_is_unchanged(text):
    assert safe_text(text) == text
