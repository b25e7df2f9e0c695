"""Every printed output shows a log's escape sequences inert and visible (DESIGN.md, "Log text
is untrusted"): check (text and JSON), status, report (terminal, Markdown, HTML, JSON), export,
the --on-critical hook's JSON and rlwatch's own stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.hostile import (
    C1_SHOWN,
    CLIPBOARD_SHOWN,
    EVIL_KEY,
    EVIL_KEY_SHOWN,
    TITLE0,
    TITLE0_SHOWN,
    TITLE2_SHOWN,
    controls_in,
    hostile_log,
)
from tui.parsers.text import safe_text
from tui.rules.findings import Finding, Severity
from tui.session.alerts import run_hook

RLWATCH = Path(sys.executable).parent / "rlwatch"
# A run directory whose very name is an escape sequence (a remote box names its own files).
EVIL_DIR = f"run{TITLE0}"


def rlwatch(home: Path, *args: str) -> subprocess.CompletedProcess:
    environ = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run([str(RLWATCH), *args], capture_output=True, text=True, timeout=120,
                          env=environ, stdin=subprocess.DEVNULL)


def hostile_run(tmp_path: Path) -> Path:
    folder = tmp_path / EVIL_DIR
    folder.mkdir()
    hostile_log(folder)
    return folder


def assert_inert(text: str) -> None:
    assert controls_in(text) == [], text


def test_check_text_shows_the_sequences_and_obeys_none(tmp_path):
    done = rlwatch(tmp_path, "check", str(hostile_run(tmp_path)))
    assert done.returncode == 2
    assert_inert(done.stdout)
    assert_inert(done.stderr)  # "rlwatch: … picked <log>" names the evil directory
    assert EVIL_KEY_SHOWN in done.stdout and f"{TITLE0_SHOWN}{CLIPBOARD_SHOWN}" in done.stdout
    assert "run␛]0;PWNED-TITLE␇" in done.stdout


def test_check_json_carries_the_visible_form_and_no_raw_c1(tmp_path):
    done = rlwatch(tmp_path, "check", "--json", str(hostile_run(tmp_path)))
    assert done.returncode == 2
    assert_inert(done.stdout)
    assert_inert(done.stderr)
    assert done.stdout.isascii()  # \uXXXX for the control pictures and everything else
    result = json.loads(done.stdout)
    assert EVIL_KEY_SHOWN in result["latest"] and EVIL_KEY not in result["latest"]
    assert C1_SHOWN in EVIL_KEY_SHOWN and TITLE2_SHOWN in EVIL_KEY_SHOWN
    messages = " ".join(f["message"] for f in result["findings"])
    assert EVIL_KEY_SHOWN in messages and TITLE0_SHOWN in messages
    for value in (result["target"], result["run"]["log"]):
        assert "run␛]0;PWNED-TITLE␇" in value
    # Decoded, nothing terminal-active either: ``jq -r`` prints these strings raw.
    assert_inert(json.dumps(result, ensure_ascii=False))


def test_status_line_names_the_run_visibly(tmp_path):
    done = rlwatch(tmp_path, "status", str(hostile_run(tmp_path)))
    assert done.returncode == 2
    assert controls_in(done.stdout) == [] and done.stdout.count("\n") == 1
    assert done.stdout.startswith("run␛]0;PWNED-TITLE␇/grpo 5/5 "), done.stdout


def test_report_in_every_format_shows_the_sequences_inert(tmp_path):
    run = hostile_run(tmp_path)
    terminal = rlwatch(tmp_path, "report", str(run))
    assert terminal.returncode == 0, terminal.stderr
    as_json = rlwatch(tmp_path, "report", "--json", str(run))
    pages = {}
    for suffix in ("md", "html"):
        out = tmp_path / f"report.{suffix}"
        done = rlwatch(tmp_path, "report", str(run), "-o", str(out))
        assert done.returncode == 0, done.stderr
        assert_inert(done.stderr)
        pages[suffix] = out.read_text(encoding="utf-8")
    for text in (terminal.stdout, terminal.stderr, as_json.stdout, *pages.values()):
        assert_inert(text)
    assert EVIL_KEY_SHOWN in terminal.stdout
    assert "evil␛]0;PWNED-TITLE␇" in pages["md"]  # then Markdown-escaped (its backslashes)
    # The printed sample (its prompt and response carry OSC 0, 2, 52, 8 and a clear screen).
    assert f"what is 2+2? {TITLE0_SHOWN} {CLIPBOARD_SHOWN}" in terminal.stdout
    assert "␛]0;PWNED-TITLE␇" in pages["html"] and "[bold]markup[/bold]" in pages["html"]
    assert as_json.stdout.isascii()
    result = json.loads(as_json.stdout)
    assert_inert(json.dumps(result, ensure_ascii=False))
    assert any(TITLE0_SHOWN in sample["prompt"] for sample in result["samples"])


def test_export_writes_keys_as_tags_in_their_visible_form(tmp_path):
    from tests.support import read_back

    out = tmp_path / "tb"
    done = rlwatch(tmp_path, "export", str(hostile_run(tmp_path)), "--tensorboard", str(out))
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout)
    assert_inert(done.stderr)
    tags = set(read_back(out))
    assert EVIL_KEY_SHOWN in tags
    assert all(controls_in(tag) == [] for tag in tags)


async def test_the_hook_gets_json_whose_strings_are_inert(tmp_path):
    out = tmp_path / "got.json"
    message = f"{EVIL_KEY} = nan at step 5: not a finite number"
    finding = Finding("loss-nan", Severity.CRITICAL, EVIL_KEY)
    finding.add_hit(5, float("nan"), message)
    assert await run_hook(f"cat > {out}", finding, f"/runs/{EVIL_DIR}/grpo.log") is None
    raw = out.read_text(encoding="utf-8")
    assert raw.isascii()
    got = json.loads(raw)
    assert_inert(raw)
    assert_inert(json.dumps(got, ensure_ascii=False))  # what ``jq -r .message`` would print
    assert got["metric"] == safe_text(EVIL_KEY)
    assert TITLE0_SHOWN in got["message"] and got["run"] == "/runs/run␛]0;PWNED-TITLE␇/grpo.log"


def test_rlwatchs_own_stderr_shows_what_it_quotes_inert(capsys):
    from tui.cli.main import main

    assert main(["check", f"/nonexistent/run{TITLE0}\x9b2J/grpo.log"]) == 3
    err = capsys.readouterr().err
    assert_inert(err)
    assert err == f"rlwatch: /nonexistent/run{TITLE0_SHOWN}\\x9b2J/grpo.log: no such file or directory\n"
    assert not hasattr(sys.stderr, "_stream")  # put back afterwards


# A file name is untrusted text too: a newline in it must not fake a line of rlwatch's output.
FAKE = "grpo\nrlwatch: all fine \u2713 ok\u202e.log"
FAKE_SHOWN = "grpo\u240arlwatch: all fine \u2713 ok\\u202e.log"


def test_a_newline_in_a_file_name_is_shown_not_obeyed_in_every_output(tmp_path):
    run = tmp_path / "cola"
    run.mkdir()
    hostile_log(run, FAKE)
    done = rlwatch(tmp_path, "check", str(run))
    assert done.stderr == f"rlwatch: watching {run}/{FAKE_SHOWN} (newest of 1 log file(s) with verl step lines)\n"
    assert done.stdout.startswith(f"{run}/{FAKE_SHOWN}: crashed, ") and "\nrlwatch: all fine" not in done.stdout
    status = rlwatch(tmp_path, "status", str(run))
    assert status.stdout.count("\n") == 1 and "grpo␊rlwatch" in status.stdout
    report = rlwatch(tmp_path, "report", str(run))
    assert report.stdout.startswith(f"rlwatch report — {run}/{FAKE_SHOWN}, step 5/5")
    for done in (status, report):
        assert_inert(done.stdout) and assert_inert(done.stderr)
    other = tmp_path / "other"
    other.mkdir()
    hostile_log(other, FAKE)
    fleet = rlwatch(tmp_path, "check", str(run), str(other / "no\nsuch.log"))
    assert f"{other}/no␊such.log: " in fleet.stdout and "\nsuch.log" not in fleet.stdout
    assert f"{run}/{FAKE_SHOWN}: crashed" in fleet.stdout

