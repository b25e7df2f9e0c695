"""A log that tries to drive the terminal: OSC titles, OSC 52, OSC 8, CSI clear, C1, markup,
and bidirectional overrides that reorder what a bidi-aware terminal shows.

Shared by the tests of every output (DESIGN.md, "Log text is untrusted"):
each checks that what it prints holds no control character and shows the
sequences in safe_text's visible form.
"""

from __future__ import annotations

from pathlib import Path

from tui.parsers.text import safe_text, strip_ansi

TITLE0 = "\x1b]0;PWNED-TITLE\x07"  # OSC 0, BEL-terminated: icon name and title
TITLE2 = "\x1b]2;PWNED-TWO\x1b\\"  # OSC 2, ST-terminated: title
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"  # OSC 52: put "pwned" on the clipboard (tmux: a buffer)
LINK = "\x1b]8;;https://evil.example/\x1b\\here\x1b]8;;\x1b\\"  # OSC 8 hyperlink
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
C1_CSI = "\u009b2J"  # 8-bit CSI clear (UTF-8 terminals may obey it)
MARKUP = "[bold]markup[/bold][link=https://evil.example/]x[/link]"
# Right-to-left override, an isolate and the marks: "Trojan Source" reordering.
BIDI = "\u202eevil\u202c\u2067iso\u2069\u200e\u200f\u061c"
# One word (no whitespace), so it can be a metric key.
ALL = TITLE0 + TITLE2 + CLIPBOARD + LINK + CLEAR + C1_CSI + BIDI + MARKUP

# What every output must show instead (safe_text's visible form).
TITLE0_SHOWN = "␛]0;PWNED-TITLE␇"
TITLE2_SHOWN = "␛]2;PWNED-TWO␛\\"
CLIPBOARD_SHOWN = "␛]52;c;cHduZWQ=␇"
CLEAR_SHOWN = "␛[2J␛[H"
C1_SHOWN = "\\x9b2J"
BIDI_SHOWN = "\\u202eevil\\u202c\\u2067iso\\u2069\\u200e\\u200f\\u061c"

# A metric key carrying every sequence: a nan in it is a critical loss-nan finding
# whose message quotes the key.
EVIL_KEY = f"evil{ALL}/loss"
EVIL_KEY_SHOWN = safe_text(strip_ansi(EVIL_KEY))  # the parser drops CSI from a line


def _step(step: int, loss: str) -> str:
    return (f"step:{step} - critic/score/mean:0.{step} - actor/pg_loss:0.0{step} - "
            f"actor/entropy:0.5 - {EVIL_KEY}:{loss}\n")


def hostile_log(directory: Path, name: str = "grpo.log") -> Path:
    """Five steps whose lines carry the sequences in a key (nan at step 5), plain lines and a
    printed sample carrying them in step 4's text, a traceback line carrying them, and a crash
    whose exception line carries them."""
    lines = ["Total training steps: 5\n"]
    lines += [_step(step, "0.1") for step in range(1, 4)]
    lines += [
        f"plain line with a title {TITLE0} and {TITLE2}\n",
        f"clipboard {CLIPBOARD} link {LINK} clear {CLEAR} c1 {C1_CSI} {MARKUP}\n",
        f"[prompt] what is 2+2? {TITLE0} {CLIPBOARD}\n",
        f"[response] four {TITLE2} {LINK} {CLEAR}\n",
        "[ground_truth] 4\n",
        "[score] 1.0\n",
        _step(4, "0.1"),
        f"Traceback (most recent call last): {TITLE0}{CLIPBOARD}\n",
        _step(5, "nan"),
        # The crash the run ends on: its exception line names it in the header, the title,
        # the findings and check (a traceback a step follows, above, is only an error).
        "Traceback (most recent call last):\n",
        '  File "/app/train.py", line 9, in <module>\n',
        f"RuntimeError: boom{TITLE0}{CLIPBOARD}{BIDI}\n",
    ]
    path = directory / name
    path.write_text("".join(lines), encoding="utf-8")
    return path


BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def controls_in(text: str, newlines: bool = True) -> list[str]:
    """The terminal-active characters in ``text`` (newlines allowed when ``newlines``), bidi
    controls included."""
    return [hex(ord(c)) for c in text
            if (c != "\n" or not newlines) and (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F
                                                or c in BIDI_CONTROLS)]
