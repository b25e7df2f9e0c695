"""``rlwatch status``: one line for tmux's status-right, reading only what is new each time."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.corpus import verl_log
from tests.session.test_process_states import hung_trainer, quick_stall_rules
from tests.sshd import ClientHome, Sshd, find_sshd
from tests.support import RLWATCH, healthy_then_nan, metric, packages_loaded_by, step_lines
from tui.cli.status_command import status_line
from tui.cli.status_state import MIN_CONTEXT_STEPS, cache_path
from tui.cli.targets import OpenedTarget
from tui.parsers.log_scanner import NEEDLES
from tui.rules.rule_file import load_rules
from tui.session.run_mutes import RunMutes
from tui.sources.base import Data
from tui.sources.local_file import LocalFile
from tui.ui.format import format_number


def status(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``rlwatch status`` with its own HOME (so its own cache), as tmux would run it."""
    environ = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **env}
    return subprocess.run([str(RLWATCH), "status", *args], capture_output=True, text=True,
                          timeout=60, env=environ, stdin=subprocess.DEVNULL)


def reward_of(line: bytes) -> str:
    return format_number(metric(line, "critic/score/mean"))


def test_one_line_with_run_step_reward_and_state_and_checks_exit_codes(tmp_path):
    log, nan_line = healthy_then_nan(tmp_path)
    log.write_bytes(b"Total training steps: 200\n" + log.read_bytes())
    done = status(tmp_path, str(log))
    name = f"{tmp_path.name}/grpo"
    assert re.fullmatch(rf"{name} 30/200 reward {reward_of(step_lines(30)[-1])} ▲ WARN [\w-]+( \+\d+)?\n",
                        done.stdout), done.stdout
    assert done.returncode == 1 and done.stderr == ""
    with open(log, "ab") as handle:
        handle.write(nan_line)
    done = status(tmp_path, str(log))
    assert done.stdout == f"{name} 31/200 reward {reward_of(nan_line)} ✖ CRIT loss-nan\n"
    assert done.returncode == 2


def test_muted_rules_do_not_colour_the_status_line(tmp_path):
    """032's first 30 steps warn (the entropy left its band at step 21; the train reward is
    21% above validation). Muted with --mute, or in the dashboard (kept in the user's state
    directory), they are not counted; the KL and clip fraction are notes all along."""
    log, _ = healthy_then_nan(tmp_path)
    name = f"{tmp_path.name}/grpo"
    assert status(tmp_path, str(log)).returncode == 1
    done = status(tmp_path, str(log), "--mute", "entropy-low,val-gap")
    assert done.returncode == 0 and done.stdout.endswith(" ✓ ok\n"), done.stdout
    assert done.stdout.startswith(name)
    state = tmp_path / "state"
    RunMutes(str(log), state / "rlwatch" / "muted").save({"entropy-low": 30, "val-gap": 30})
    assert status(tmp_path, str(log), XDG_STATE_HOME=str(state)).returncode == 0


def test_a_run_directory_is_searched_like_everywhere_else(tmp_path):
    run = tmp_path / "cola"
    run.mkdir()
    (run / "train.log").write_bytes(b"".join(step_lines(4)))
    done = status(tmp_path, str(run))
    assert done.stdout.startswith("cola/train 4 reward ") and done.stderr == ""


class CountingSource:
    """A real LocalFile that records where each read starts and how many bytes it delivers."""

    def __init__(self, path: Path, **options) -> None:
        self.file = LocalFile(path, **options)
        self.reads: list[tuple[int, int]] = []
        self.logger_files = None

    @property
    def label(self) -> str:
        return self.file.label

    async def connect(self):
        return await self.file.connect()

    async def stream(self, start: int, follow: bool):
        delivered = 0
        async for event in self.file.stream(start, follow):
            if isinstance(event, Data):
                delivered += len(event.data)
            yield event
        self.reads.append((start, delivered))

    async def read_range(self, start: int, end: int) -> bytes:
        return await self.file.read_range(start, end)

    async def close(self) -> None:
        await self.file.close()


async def line_for(path: Path, cache: Path, **options) -> tuple[str, CountingSource]:
    source = CountingSource(path, **options)
    line, _ = await status_line(OpenedTarget(source, None), load_rules(), cache)
    return line, source


async def test_each_call_reads_only_the_bytes_written_since_the_last(tmp_path):
    lines = step_lines(12)
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(lines[:10]))
    cache = tmp_path / "cache"
    first, source = await line_for(log, cache)
    assert " 10 reward " in first and source.reads == [(0, log.stat().st_size)]
    assert cache_path(cache, str(log)).is_file()

    unchanged, source = await line_for(log, cache)
    assert unchanged == first and source.reads == [(log.stat().st_size, 0)]

    size = log.stat().st_size
    with open(log, "ab") as handle:
        handle.write(lines[10] + lines[11])
    later, source = await line_for(log, cache)
    assert f" 12 reward {reward_of(lines[11])} " in later
    assert source.reads == [(size, len(lines[10]) + len(lines[11]))]


async def test_a_big_log_is_first_read_through_grep_then_only_its_new_bytes(tmp_path):
    lines = step_lines(12)
    log = tmp_path / "grpo.log"
    log.write_bytes(b"chatter\n" * 1000 + b"".join(lines[:10]))
    cache = tmp_path / "cache"
    grep = {"prefilter": NEEDLES, "grep_min_bytes": 0}  # as rlwatch does for a log of 32 MB+
    first, source = await line_for(log, cache, **grep)
    assert f" 10 reward {reward_of(lines[9])} " in first
    assert source.reads == [(0, 0)]  # every line came from grep, no bytes were read whole
    size = log.stat().st_size
    with open(log, "ab") as handle:
        handle.write(lines[10])
    later, source = await line_for(log, cache, **grep)
    assert " 11 reward " in later and source.reads == [(size, len(lines[10]))]


async def test_a_replaced_or_truncated_log_is_read_again_from_the_start(tmp_path):
    lines = step_lines(10)
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(lines))
    cache = tmp_path / "cache"
    assert " 10 reward " in (await line_for(log, cache))[0]
    replacement = tmp_path / "new.log"
    replacement.write_bytes(b"".join(lines[:4]) + lines[9].replace(b"step:10 ", b"step:5 ", 1))
    os.replace(replacement, log)  # a new run under the same name, longer than nothing yet
    line, source = await line_for(log, cache)
    assert " 5 reward " in line and source.reads[0][0] == 0
    log.write_bytes(b"".join(lines[:3]))
    line, source = await line_for(log, cache)
    assert " 3 reward " in line and source.reads[0][0] == 0


async def test_a_line_still_being_written_waits_for_its_end(tmp_path):
    lines = step_lines(30)
    log = tmp_path / "grpo.log"
    half = len(lines[29]) // 2
    log.write_bytes(b"".join(lines[:29]) + lines[29][:half])
    cache = tmp_path / "cache"
    assert " 29 reward " in (await line_for(log, cache))[0]
    with open(log, "ab") as handle:
        handle.write(lines[29][half:])
    line, _ = await line_for(log, cache)
    assert f" 30 reward {reward_of(lines[29])} " in line


def test_status_judges_the_recent_steps_and_check_the_whole_run(tmp_path):
    lines = step_lines(MIN_CONTEXT_STEPS + 60)
    lines[0] = lines[0].replace(b"actor/pg_loss:", b"actor/pg_loss:nan - was/pg_loss:", 1)
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(lines))
    whole = subprocess.run([str(RLWATCH), "check", str(log)], capture_output=True, text=True,
                           timeout=60, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert whole.returncode == 2 and "loss-nan" in whole.stdout  # step 1's nan, long ago
    recent = status(tmp_path, str(log))
    assert "CRIT" not in recent.stdout and recent.returncode in (0, 1)


@pytest.mark.parametrize(("args", "env"), [(["--ascii"], {}), ([], {"LANG": "C"})])
def test_ascii_when_asked_or_when_the_locale_is_not_utf8(tmp_path, args, env):
    log, nan_line = healthy_then_nan(tmp_path)
    log.write_bytes(log.read_bytes() + nan_line)
    done = status(tmp_path, str(log), *args, **env)
    assert done.stdout.isascii() and done.stdout.endswith(" X CRIT loss-nan\n")
    assert status(tmp_path, str(log), "--unicode", **env).stdout.endswith(" ✖ CRIT loss-nan\n")


def test_an_unreadable_target_is_one_line_on_stdout_and_exit_3(tmp_path):
    done = status(tmp_path, str(tmp_path / "nope.log"))
    assert done.returncode == 3
    assert done.stdout == f"rlwatch: {tmp_path / 'nope.log'}: no such file or directory\n"


@pytest.mark.parametrize("content", [b"", b"\x8f\x01\xfe random bytes \x00\xff" * 300,
                                     b"just some text\nno training here\n"])
def test_what_check_refuses_status_refuses_too(tmp_path, content):
    log = tmp_path / "grpo.log"
    log.write_bytes(content)
    done = status(tmp_path, str(log))
    check = subprocess.run([str(RLWATCH), "check", str(log)], capture_output=True, text=True,
                           timeout=60, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == check.returncode == 3
    assert done.stdout == check.stderr == (f"rlwatch: {log}: no verl step lines, progress bars or "
                                           "errors found (not a training log?)\n")
    assert status(tmp_path, "/dev/null").returncode == 3


def test_status_imports_no_ui_network_or_gpu_library():
    assert packages_loaded_by("import tui.cli.status_command", {
        "textual", "rich", "asyncssh", "pynvml", "tensorboard", "plotext"}) == []


@pytest.fixture(scope="module")
def gpu_box(tmp_path_factory):
    """A real sshd on 127.0.0.1 as ``gpu``, and a client home that trusts it."""
    if find_sshd() is None:
        pytest.skip("OpenSSH's sshd is not installed (.ci/run installs openssh-server)")
    root = tmp_path_factory.mktemp("ssh")
    home = ClientHome(root / "home")
    server = Sshd(root / "gpu", [home.public_key]).start()
    home.add_host("gpu", server.port)
    home.trust(server.known_hosts_line())
    yield home
    server.stop()


def test_a_remote_run_gives_the_same_line_and_follows_its_growth(gpu_box, tmp_path):
    """Each call opens its own SSH connection (see the note in tui/cli/status_command.py);
    what it reads is still only the new bytes, from the kept offset."""
    log, nan_line = healthy_then_nan(tmp_path)
    env = {key: value for key, value in gpu_box.env().items() if not key.startswith("XDG_")}
    remote = subprocess.run([str(RLWATCH), "status", f"gpu:{log}"], capture_output=True, text=True,
                            timeout=60, env=env, stdin=subprocess.DEVNULL)
    local = status(tmp_path, str(log))
    assert remote.stdout == local.stdout and remote.returncode == local.returncode == 1, remote.stderr
    assert cache_path(gpu_box.path / ".cache" / "rlwatch" / "status", f"gpu:{log}").is_file()
    with open(log, "ab") as handle:
        handle.write(nan_line)
    again = subprocess.run([str(RLWATCH), "status", f"gpu:{log}"], capture_output=True, text=True,
                           timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert again.stdout.endswith(f" 31 reward {reward_of(nan_line)} ✖ CRIT loss-nan\n")
    assert again.returncode == 2


def test_the_corpus_runs_give_one_line_each(tmp_path):
    for prefix in ("031", "034", "036"):
        done = status(tmp_path, str(verl_log(prefix)))
        assert done.stdout.count("\n") == 1 and done.returncode in (0, 1, 2), done.stdout


async def test_the_status_line_of_a_stalled_run_says_what_its_trainer_does(tmp_path: Path):
    log = tmp_path / "run.log"
    with hung_trainer(log, stopped=True) as trainer:
        time.sleep(1.0)  # half a second past its last step: stalled by these rules
        line, _ = await status_line(OpenedTarget(LocalFile(log), None), quick_stall_rules(), tmp_path / "cache")
    assert line.endswith(f"✖ CRIT stalled · pid {trainer.pid} stopped"), line
