"""asyncssh's liboqs lookups, started early on a thread: the same answers, then the stdlib's own.

Each case runs in a fresh interpreter: this one imported asyncssh long ago.
"""

import json
import subprocess
import sys
from pathlib import Path

from tui.sources.ssh import liboqs_lookup

REPO = Path(__file__).resolve().parents[3]


def fresh(code: str) -> dict:
    """What ``code`` (run in a new interpreter, ``stdlib`` being the standard library's own
    ``find_library``) printed as JSON."""
    prelude = "import ctypes.util, json, sys\nstdlib = ctypes.util.find_library\n"
    done = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True,
                          cwd=REPO, timeout=60, check=True)
    return json.loads(done.stdout)


def test_asyncssh_gets_the_standard_librarys_answers_and_find_library_is_given_back():
    seen = fresh(
        "from tui.sources.ssh import liboqs_lookup\n"
        "liboqs_lookup.start()\n"
        "early = ctypes.util.find_library is not stdlib\n"
        "import asyncssh.crypto.pq as pq\n"
        "print(json.dumps({'early': early, 'given_back': ctypes.util.find_library is stdlib,\n"
        "                  'found': pq._oqs_lib, 'stdlib': stdlib('oqs') or stdlib('liboqs')}))\n")
    assert seen["early"] and seen["given_back"]
    assert seen["found"] == seen["stdlib"]


def test_other_names_are_looked_up_as_ever_meanwhile():
    seen = fresh(
        "from tui.sources.ssh import liboqs_lookup\n"
        "liboqs_lookup.start()\n"
        "print(json.dumps([ctypes.util.find_library('c'), stdlib('c'),\n"
        "                  ctypes.util.find_library is not stdlib]))\n")
    assert seen[0] == seen[1] and seen[0]  # libc is found, by the same function
    assert seen[2]  # asyncssh has not asked yet: the early answers are still kept for it


def test_nothing_starts_once_asyncssh_is_imported():
    import ctypes.util

    import asyncssh  # noqa: F401  (imported: it has asked already)

    before = ctypes.util.find_library
    liboqs_lookup.start()
    assert ctypes.util.find_library is before


def test_the_lookups_stop_at_the_first_name_found_as_asyncssh_does():
    asked: list[str] = []

    def find(name: str) -> str | None:
        asked.append(name)
        return "liboqs.so.5" if name == "oqs" else None

    lookups = liboqs_lookup._Lookups(find)
    lookups.thread.start()
    assert lookups.answer("oqs") == "liboqs.so.5"
    assert asked == ["oqs"]


def test_a_remote_check_starts_them_and_a_local_one_or_a_fleet_does_not(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step:1 - critic/score/mean:0.5\n")
    probe = ("import threading, runpy, sys\n"
             "import tui.cli.main as main\n"
             "names = []\n"
             "start = threading.Thread.start\n"
             "def noted(self):\n"
             "    names.append(self.name)\n"
             "    start(self)\n"
             "threading.Thread.start = noted\n"
             "try:\n"
             "    main._dispatch(sys.argv[1:])\n"
             "except BaseException:\n"
             "    pass\n"
             "print('\\n' + json.dumps(names))\n")
    closed = "ssh://127.0.0.1:1/runs/x"  # refused at once
    for targets, expected in (([str(log)], False), ([closed], True), ([closed, closed], False)):
        done = subprocess.run([sys.executable, "-c", "import json\n" + probe, "check", *targets,
                               "--json"], capture_output=True, text=True, cwd=REPO, timeout=60)
        names = json.loads(done.stdout.strip().splitlines()[-1])
        assert ("rlwatch-liboqs" in names) is expected, (targets, names)
