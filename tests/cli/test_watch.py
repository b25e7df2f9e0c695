"""``rlwatch watch --headless``: the real command on real logs written as a run writes them, telling
a real webhook (Apprise's json://, received by an HTTP server on 127.0.0.1) and a real SMTP server
(aiosmtpd) exactly what happened, once, across a restart of the watcher."""

from __future__ import annotations

import email
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.corpus import REPO
from tests.session.test_events import FINISHED, QUICK_STALL, steps_then_crash
from tests.sshd import ClientHome, Sshd, find_sshd

# The watcher judges every run every 5 s: an event is out within this.
EVENT_S = 15.0
# How long a test waits to be sure that nothing more comes.
QUIET_S = 7.0


class Webhook:
    """An HTTP server on 127.0.0.1 that keeps every JSON body POSTed to it (after answering
    503, as a service that is down, to the first ``refusals``)."""

    def __init__(self, refusals: int = 0) -> None:
        self.received: queue.Queue[dict] = queue.Queue()
        self.arrived: list[float] = []  # time.monotonic() of each message taken
        self.refused = 0
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if hook.refused < refusals:
                    hook.refused += 1
                    self.send_response(503)
                else:
                    hook.arrived.append(time.monotonic())
                    hook.received.put(json.loads(body))
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"json://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def next(self, timeout: float = EVENT_S) -> dict:
        return self.received.get(timeout=timeout)

    def none_within(self, seconds: float) -> bool:
        try:
            self.received.get(timeout=seconds)
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    hook = Webhook()
    yield hook
    hook.close()


class Watcher:
    """``rlwatch watch … --headless --json`` as a process, its stdout read line by line."""

    def __init__(self, home: Path, *args: str, env: dict[str, str] | None = None) -> None:
        env = {**(env or os.environ), "XDG_STATE_HOME": str(home / "state"), "XDG_CONFIG_HOME": str(home / "config"),
               "XDG_CACHE_HOME": str(home / "cache"), "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen([sys.executable, "-m", "tui", "watch", "--headless", "--json", *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)
        self.lines: queue.Queue[dict] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line.decode(errors="replace"))

    def next(self, timeout: float = EVENT_S) -> dict:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no event in {timeout} s; stderr: {''.join(self.stderr)}") from None

    def none_within(self, seconds: float) -> bool:
        try:
            extra = self.lines.get(timeout=seconds)
        except queue.Empty:
            return True
        raise AssertionError(f"unexpected event {extra}")

    def stop(self) -> int:
        """SIGTERM, as systemd stops a service; the exit status."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=20)


@pytest.fixture
def watchers() -> Iterator[list[Watcher]]:
    started: list[Watcher] = []
    yield started
    for watcher in started:
        if watcher.process.poll() is None:
            watcher.process.kill()
            watcher.process.wait()


@contextmanager
def watching(home: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Watcher]:
    """A watcher for one test (for the tests of other folders: Ray's and Slurm's clusters),
    killed on leaving if it is still running."""
    watcher = Watcher(home, *args, env=env)
    try:
        yield watcher
    finally:
        if watcher.process.poll() is None:
            watcher.process.kill()
            watcher.process.wait()


def start(watchers: list[Watcher], home: Path, *args: str, env: dict[str, str] | None = None) -> Watcher:
    watcher = Watcher(home, *args, env=env)
    watchers.append(watcher)
    return watcher


CRASH_EXCEPTION = "RuntimeError: reward worker returned a malformed batch at step 5"


def run_log(tmp_path: Path, name: str = "cola.log") -> Path:
    """Where a test's run writes its log: ``runs/NAME`` (the run is named ``runs/cola``)."""
    log = tmp_path / "runs" / name
    log.parent.mkdir(exist_ok=True)
    return log


def test_a_crash_is_printed_and_sent_once_across_a_restart(tmp_path, webhook, watchers):
    steps, crash = steps_then_crash()
    log = run_log(tmp_path)
    log.write_bytes(steps)
    watcher = start(watchers, tmp_path, str(log), "--notify", webhook.url)
    assert watcher.none_within(3.0)  # a healthy run: nothing to tell
    with log.open("ab") as out:
        out.write(crash)
    event = watcher.next()
    assert event["kind"] == "critical" and event["rule"] == "crash" and event["rank"] == 1
    assert event["exception"] == CRASH_EXCEPTION and event["run"] == "runs/cola" and event["step"] == 4
    sent = webhook.next()
    assert sent["title"] == "rlwatch: runs/cola crashed"
    assert sent["message"] == f"runs/cola on local, step 4: crashed: {CRASH_EXCEPTION} (rank 1 on localhost)"
    assert watcher.stop() == 0
    again = start(watchers, tmp_path, str(log), "--notify", webhook.url)
    assert again.none_within(QUIET_S) and webhook.none_within(0.1)
    assert again.stop() == 0


# The bound: a crash told within this long of its last line reaching the log.
CRASH_TOLD_S = 5.0


def _appended(log: Path, data: bytes) -> float:
    """Append ``data`` to ``log`` as a process writes it; when it was there."""
    with log.open("ab") as out:
        out.write(data)
    return time.monotonic()


def test_a_crash_cut_short_is_told_within_5_s_of_its_last_line(tmp_path, webhook, watchers):
    """A process killed while it printed its traceback never writes the exception line: the
    crash is told without it, not after a long wait for it."""
    steps, crash = steps_then_crash()
    log = run_log(tmp_path)
    log.write_bytes(steps)
    watcher = start(watchers, tmp_path, str(log), "--notify", webhook.url)
    assert watcher.none_within(3.0)
    written = _appended(log, crash[:crash.index(b"[rank1]: RuntimeError")])
    sent = webhook.next()
    assert webhook.arrived[-1] - written <= CRASH_TOLD_S
    assert sent["title"] == "rlwatch: runs/cola crashed" and sent["message"].startswith("runs/cola on local, step 4: ")
    assert watcher.next()["rule"] == "crash"
    assert watcher.stop() == 0


def test_an_exception_line_printed_after_its_traceback_is_in_the_notice_within_5_s(tmp_path, webhook, watchers):
    """The traceback's frames reach the log a second before its exception line (a slow
    filesystem, a rank flushing late): the notice waits for that line, names it and the
    failing rank, and still leaves within the bound of the last line."""
    steps, crash = steps_then_crash()
    log = run_log(tmp_path)
    log.write_bytes(steps)
    watcher = start(watchers, tmp_path, str(log), "--notify", webhook.url)
    assert watcher.none_within(3.0)
    cut = crash.index(b"[rank1]: RuntimeError")
    _appended(log, crash[:cut])
    time.sleep(1.0)
    written = _appended(log, crash[cut:])
    sent = webhook.next()
    assert webhook.arrived[-1] - written <= CRASH_TOLD_S
    assert sent["message"] == f"runs/cola on local, step 4: crashed: {CRASH_EXCEPTION} (rank 1 on localhost)"
    event = watcher.next()
    assert (event["exception"], event["rank"]) == (CRASH_EXCEPTION, 1)
    assert watcher.stop() == 0


def test_a_stall_is_told_and_so_is_the_run_moving_again(tmp_path, webhook, watchers):
    steps, _ = steps_then_crash()
    lines = steps.splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if line.startswith(b"step:"))
    rules = tmp_path / "rules.toml"
    rules.write_text(QUICK_STALL)
    log = run_log(tmp_path)
    log.write_bytes(b"".join(lines[:last]))
    watcher = start(watchers, tmp_path, str(log), "--rules", str(rules), "--notify", webhook.url)
    stall = watcher.next()
    assert stall["kind"] == "critical" and stall["rule"] == "stalled" and stall["step"] == 3
    assert "after step 3" in stall["what"]
    assert webhook.next()["title"] == "rlwatch: runs/cola stalled"
    # Restarted while the run is still stalled: the same stall, not told again.
    assert watcher.stop() == 0
    watcher = start(watchers, tmp_path, str(log), "--rules", str(rules), "--notify", webhook.url)
    assert watcher.none_within(QUIET_S) and webhook.none_within(0.1)
    with log.open("ab") as out:
        out.write(b"".join(lines[last:]))
    moving = watcher.next()
    assert moving["kind"] == "moving" and moving["step"] == 4
    # Nothing comes after step 4 either: a new stall, after it this time.
    again = watcher.next()
    assert again["rule"] == "stalled" and "after step 4" in again["what"]
    # Sent as one message or two, as the burst window falls.
    lines = webhook.next()["message"].splitlines()
    if len(lines) == 1:
        lines += webhook.next()["message"].splitlines()
    assert lines == [f"runs/cola on local, step 4: {moving['what']}", f"runs/cola on local, step 4: {again['what']}"]
    assert watcher.stop() == 0


@pytest.mark.skipif(find_sshd() is None, reason="OpenSSH's sshd is not installed")
def test_a_crash_written_while_the_box_was_away_is_told_when_it_comes_back(tmp_path, watchers):
    home = ClientHome(tmp_path / "home")
    box = Sshd(tmp_path / "box", [home.public_key]).start()
    try:
        home.add_host("gpu", box.port)
        home.trust(box.known_hosts_line())
        steps, crash = steps_then_crash()
        log = run_log(tmp_path)
        log.write_bytes(steps)
        watcher = start(watchers, tmp_path, f"gpu:{log}", env=home.env())
        assert watcher.none_within(4.0)
        box.stop()  # the box reboots; the run crashes meanwhile
        with log.open("ab") as out:
            out.write(crash)
        time.sleep(3.0)
        box.start()
        event = watcher.next(timeout=60)
        assert (event["run"], event["host"], event["rule"]) == ("runs/cola", "gpu", "crash")
        assert event["exception"] == CRASH_EXCEPTION
        assert watcher.process.poll() is None
        assert watcher.stop() == 0
    finally:
        box.stop()


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``, by /proc/*/stat (gVisor has no
    /proc/PID/task/*/children)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def test_a_watcher_killed_outright_leaves_no_worker_behind(tmp_path, watchers):
    """The watcher's parse workers end with it, even killed with SIGKILL (they must not
    inherit its SIGTERM handler, which would swallow the signal their parent's death sends)."""
    log = run_log(tmp_path)
    log.write_bytes(b"".join(steps_then_crash()))
    # A second run whose log is not there yet: not every run is read, so the workers are kept.
    watcher = start(watchers, tmp_path, str(log), str(run_log(tmp_path, "later.log")))
    assert watcher.next()["rule"] == "crash"
    workers = children_of(watcher.process.pid)
    assert workers, "the watcher has parse workers"
    watcher.process.kill()
    watcher.process.wait()
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    for pid in left:  # not to leave them to the machine, should the test fail
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_the_parse_workers_are_let_go_once_every_run_is_read_and_a_log_written_anew_is_read_still(
        tmp_path, watchers):
    """Left running for days, the watcher holds no parse worker it no longer needs; a log
    written anew from its start afterwards (a run restarted in the same file) is read in a
    thread instead, its crash told."""
    steps, crash = steps_then_crash()
    log = run_log(tmp_path)
    log.write_bytes(steps)
    watcher = start(watchers, tmp_path, str(log))
    deadline = time.monotonic() + EVENT_S
    while children_of(watcher.process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert children_of(watcher.process.pid) == []
    chatter = b"reward worker: sample scored, nothing to see\n" * 4000  # past what is scanned inline
    anew = log.with_name("cola.log.new")
    anew.write_bytes(chatter + steps + crash)
    os.replace(anew, log)
    event = watcher.next()
    assert (event["rule"], event["exception"], event["rank"]) == ("crash", CRASH_EXCEPTION, 1)
    assert watcher.stop() == 0


def test_a_run_that_finishes_is_told_once_with_its_verdict(tmp_path, watchers):
    data = FINISHED.read_bytes()
    log = run_log(tmp_path, "grpo.log")
    log.write_bytes(data[: len(data) // 2])
    watcher = start(watchers, tmp_path, str(log))
    assert watcher.none_within(2.0)
    with log.open("ab") as out:
        out.write(data[len(data) // 2:])
    event = watcher.next()
    assert event["kind"] == "finished" and event["step"] == 8 and event["total"] == 8
    assert event["what"].startswith("finished at step 8/8; val-core/openai/gsm8k/acc/mean@1 0.875")
    assert watcher.none_within(QUIET_S)
    assert watcher.stop() == 0
    again = start(watchers, tmp_path, str(log))
    assert again.none_within(QUIET_S)
    assert again.stop() == 0


def test_a_new_run_written_over_the_log_is_news_again(tmp_path, watchers):
    """A run started again into the same file (``> grpo.log``) ends again: told again."""
    data = FINISHED.read_bytes()
    log = run_log(tmp_path, "grpo.log")
    log.write_bytes(data)
    watcher = start(watchers, tmp_path, str(log))
    assert watcher.next()["kind"] == "finished"
    log.write_bytes(data[: len(data) // 3])  # truncated: the new run's first lines
    assert watcher.none_within(3.0)
    with log.open("ab") as out:
        out.write(data[len(data) // 3:])
    assert watcher.next()["kind"] == "finished"
    assert watcher.stop() == 0


def test_two_of_five_runs_failing_in_the_same_second_make_one_message(tmp_path, webhook, watchers):
    steps, crash = steps_then_crash()
    logs = [tmp_path / f"sweep-{n}" / "train.log" for n in range(5)]
    for log in logs:
        log.parent.mkdir()
        log.write_bytes(steps)
    watcher = start(watchers, tmp_path, str(tmp_path / "sweep-*" / "train.log"), "--notify", webhook.url)
    assert watcher.none_within(3.0)
    for log in logs[1:3]:
        with log.open("ab") as out:
            out.write(crash)
    told = sorted(event["run"] for event in (watcher.next(), watcher.next()))
    assert told == ["sweep-1/train", "sweep-2/train"]
    sent = webhook.next()
    assert sent["title"] == "rlwatch: 2 events from 2 runs"
    assert sorted(sent["message"].splitlines()) == [
        f"sweep-{n}/train on local, step 4: crashed: {CRASH_EXCEPTION} (rank 1 on localhost)" for n in (1, 2)]
    assert webhook.none_within(QUIET_S) and watcher.none_within(0.1)
    assert watcher.stop() == 0
    again = start(watchers, tmp_path, str(tmp_path / "sweep-*" / "train.log"), "--notify", webhook.url)
    assert again.none_within(QUIET_S) and webhook.none_within(0.1)
    assert again.stop() == 0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_event_arrives_by_mail(tmp_path, watchers):
    from aiosmtpd.controller import Controller

    class Inbox:
        def __init__(self) -> None:
            self.mail: queue.Queue[tuple[str, list[str], bytes]] = queue.Queue()

        async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
            self.mail.put((envelope.mail_from, envelope.rcpt_tos, envelope.content))
            return "250 OK"

    inbox = Inbox()
    port = _free_port()
    smtp = Controller(inbox, hostname="127.0.0.1", port=port)
    smtp.start()
    try:
        log = run_log(tmp_path)
        log.write_bytes(b"".join(steps_then_crash()))
        url = f"mailto://127.0.0.1:{port}?from=rlwatch@example.org&to=oncall@example.org&mode=insecure"
        watcher = start(watchers, tmp_path, str(log), "--notify", url)
        assert watcher.next()["rule"] == "crash"
        sender, to, content = inbox.mail.get(timeout=EVENT_S)
        assert sender == "rlwatch@example.org" and to == ["oncall@example.org"]
        mail = email.message_from_bytes(content)
        assert mail["Subject"] == "rlwatch: runs/cola crashed"
        assert mail.get_payload(decode=True).decode().strip() == (
            f"runs/cola on local, step 4: crashed: {CRASH_EXCEPTION} (rank 1 on localhost)")
        assert watcher.stop() == 0
    finally:
        smtp.stop()


def test_a_channel_that_fails_is_said_on_stderr_and_the_watching_goes_on(tmp_path, watchers):
    log = run_log(tmp_path)
    log.write_bytes(b"".join(steps_then_crash()))
    dead = f"json://127.0.0.1:{_free_port()}/hook"  # nothing listens there
    watcher = start(watchers, tmp_path, str(log), "--notify", dead)
    assert watcher.next()["rule"] == "crash"
    deadline = time.monotonic() + EVENT_S
    while not any("failed" in line for line in watcher.stderr) and time.monotonic() < deadline:
        time.sleep(0.2)
    said = "".join(watcher.stderr)
    assert "rlwatch: notification to json://127.0.0.1" in said and "trying again in 5 s" in said
    assert watcher.process.poll() is None
    assert watcher.stop() == 0


def test_a_url_apprise_cannot_use_is_one_line_and_status_3(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tui", "watch", "--headless", str(tmp_path),
                           "--notify", "nosuchservice://x"], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}, timeout=60)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr == "rlwatch: --notify: not an Apprise URL rlwatch can send to: nosuchservice://…\n"


@pytest.mark.parametrize("targets", [["one"], ["one", "two"]], ids=["dashboard", "fleet"])
def test_the_screens_refuse_a_bad_notify_url_before_starting(tmp_path, targets):
    done = subprocess.run([sys.executable, "-m", "tui", *(str(tmp_path / t) for t in targets),
                           "--notify", "nosuchservice://x"], capture_output=True, text=True, cwd=REPO,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr == "rlwatch: --notify: not an Apprise URL rlwatch can send to: nosuchservice://…\n"


@pytest.mark.parametrize(("option", "said"), [
    (["--remind", "0"], "rlwatch: --remind takes a number of hours above 0\n"),
    (["--remind", "nan"], "rlwatch: --remind takes a number of hours above 0\n"),
    (["--metrics-port", "abc"], "rlwatch: --metrics-port abc: not a port or ADDRESS:PORT\n"),
    (["--metrics-port", "70000"], "rlwatch: --metrics-port 70000: not a port or ADDRESS:PORT\n"),
])
def test_a_bad_value_is_one_line_and_status_3(tmp_path, option, said):
    done = subprocess.run([sys.executable, "-m", "tui", "watch", "--headless", str(tmp_path), *option],
                          capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)})
    assert (done.returncode, done.stdout, done.stderr) == (3, "", said)


def test_options_of_the_headless_watcher_need_it(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tui", "watch", str(tmp_path), "--json"],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 3 and "--json needs --headless" in done.stderr  # a usage error


def test_the_channels_in_config_toml_are_told_too(tmp_path, webhook, watchers):
    (tmp_path / "config" / "rlwatch").mkdir(parents=True)
    (tmp_path / "config" / "rlwatch" / "config.toml").write_text(f'notify = ["{webhook.url}"]\n')
    log = run_log(tmp_path)
    log.write_bytes(b"".join(steps_then_crash()))
    watcher = start(watchers, tmp_path, str(log))
    assert watcher.next()["rule"] == "crash"
    assert webhook.next()["title"] == "rlwatch: runs/cola crashed"
    assert watcher.stop() == 0


def test_check_writes_openmetrics_for_the_textfile_collector(tmp_path):
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    log = run_log(tmp_path)
    log.write_bytes(b"".join(steps_then_crash()))
    done = subprocess.run([sys.executable, "-m", "tui", "check", "--format", "openmetrics", str(log)],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 2, done.stderr  # critical, as check says it
    samples = {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
               for family in text_string_to_metric_families(done.stdout) for sample in family.samples}
    who = (("host", "local"), ("run", "runs/cola"))
    assert samples[("rlwatch_run_state", tuple(sorted((*who, ("state", "crashed")))))] == 1.0
    assert samples[("rlwatch_run_step", who)] == 4.0
    assert samples[("rlwatch_run_findings", tuple(sorted((*who, ("rule", "crash"), ("severity", "critical")))))] == 1


PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


@pytest.mark.skipif(not os.access(PROMETHEUS, os.X_OK),
                    reason="Prometheus is not installed (Debian's prometheus package; .ci/run installs it)")
def test_a_real_prometheus_scrapes_the_watcher_and_sees_the_crash(tmp_path, watchers):
    log = run_log(tmp_path)
    log.write_bytes(b"".join(steps_then_crash()))
    metrics_port, web_port = _free_port(), _free_port()
    watcher = start(watchers, tmp_path, str(log), "--metrics-port", str(metrics_port))
    assert watcher.next()["rule"] == "crash"
    config = tmp_path / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: rlwatch\n"
                      f"    static_configs:\n      - targets: ['127.0.0.1:{metrics_port}']\n")
    prometheus = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                   f"--web.listen-address=127.0.0.1:{web_port}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        query = urllib.parse.quote('rlwatch_run_state{run="runs/cola",state="crashed"}')
        deadline, result = time.monotonic() + 60, []
        while not result and time.monotonic() < deadline:
            time.sleep(1.0)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/api/v1/query?query={query}",
                                            timeout=5) as answer:
                    result = json.load(answer)["data"]["result"]
            except OSError:
                continue
        [series] = result
        assert series["metric"]["host"] == "local" and series["metric"]["job"] == "rlwatch"
        assert series["value"][1] == "1"
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)
    assert watcher.stop() == 0


def test_a_metrics_port_that_is_taken_is_one_line_and_status_3(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "tui", "watch", "--headless", str(tmp_path),
                               "--metrics-port", str(port)], capture_output=True, text=True, cwd=REPO,
                              env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}, timeout=60)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr == f"rlwatch: --metrics-port {port}: Address already in use\n"


PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


@pytest.mark.skipif(not os.access(PROMTOOL, os.X_OK),
                    reason="promtool is not installed (Debian's prometheus package; .ci/run installs it)")
def test_the_alert_rules_in_the_docs_fire_on_what_the_watcher_serves(tmp_path):
    """docs/unattended.md's rules, checked and unit-tested by Prometheus's own promtool on the
    series a crashed, a stalled and a nan run expose."""
    page = (REPO / "docs" / "unattended.md").read_text(encoding="utf-8")
    rules = next(block.split("\n", 1)[1] for block in page.split("```yaml")[1:]
                 if block.lstrip("\n").startswith("groups:"))
    (tmp_path / "rules.yml").write_text(rules.split("```")[0])
    who = 'run="runs/cola",host="gpu-1"'
    (tmp_path / "test.yml").write_text(f"""rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'rlwatch_run_state{{{who},state="crashed"}}'
        values: '1x10'
      - series: 'rlwatch_run_state{{{who},state="stalled"}}'
        values: '0 0 1x10'
      - series: 'rlwatch_run_findings{{{who},rule="loss-nan",severity="critical"}}'
        values: '1x10'
    alert_rule_test:
      - eval_time: 1m
        alertname: TrainingRunCrashed
        exp_alerts:
          - exp_labels: {{run: runs/cola, host: gpu-1, state: crashed, severity: critical, team: rl}}
            exp_annotations: {{summary: "runs/cola on gpu-1 crashed"}}
      - eval_time: 3m
        alertname: TrainingRunStalled
        exp_alerts: []
      - eval_time: 8m
        alertname: TrainingRunStalled
        exp_alerts:
          - exp_labels: {{run: runs/cola, host: gpu-1, state: stalled, severity: critical, team: rl}}
            exp_annotations:
              summary: "runs/cola on gpu-1 is stalled: no new step for far longer than a step takes"
              description: "It may be hung (a collective, a checkpoint write) or dead."
      - eval_time: 1m
        alertname: TrainingRunNaN
        exp_alerts:
          - exp_labels: {{run: runs/cola, host: gpu-1, rule: loss-nan, severity: critical, team: rl}}
            exp_annotations: {{summary: "runs/cola on gpu-1: a loss or grad norm is nan or inf"}}
""")
    checked = subprocess.run([PROMTOOL, "check", "rules", "rules.yml"], capture_output=True, text=True, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run([PROMTOOL, "test", "rules", "test.yml"], capture_output=True, text=True, cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_a_glob_becomes_its_runs_in_the_metrics(tmp_path, watchers):
    """A glob is a row until its box answers, then the runs it matches: the glob itself is no
    run that never becomes readable."""
    steps, _ = steps_then_crash()
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.log").write_bytes(steps)
    port = _free_port()
    watcher = start(watchers, tmp_path, str(tmp_path / "*" / "train.log"), "--metrics-port", str(port))
    deadline, readable = time.monotonic() + EVENT_S, {}
    while time.monotonic() < deadline and sorted(readable) != ["a/train", "b/train"]:
        time.sleep(0.5)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
                text = answer.read().decode()
        except OSError:
            continue
        readable = {line.split('run="')[1].split('"')[0]: line.rsplit(" ", 1)[1]
                    for line in text.splitlines() if line.startswith("rlwatch_run_readable{")}
    assert readable == {"a/train": "1.0", "b/train": "1.0"}
    assert watcher.stop() == 0


def test_two_runs_of_one_name_on_one_host_keep_their_own_records(tmp_path, watchers):
    """``/a/exp/train.log`` and ``/b/exp/train.log`` are both ``exp/train`` on local: what was
    told about one is not taken as told about the other after a restart."""
    steps, crash = steps_then_crash()
    first, second = (tmp_path / side / "exp" / "train.log" for side in ("a", "b"))
    for log in (first, second):
        log.parent.mkdir(parents=True)
        log.write_bytes(steps)
    first.write_bytes(steps + crash)
    watcher = start(watchers, tmp_path, str(first), str(second))
    told = watcher.next()
    assert (told["run"], told["rule"]) == ("exp/train", "crash")
    assert watcher.none_within(3.0)
    assert watcher.stop() == 0
    with second.open("ab") as out:  # the other run crashes the same way while nobody watches
        out.write(crash)
    again = start(watchers, tmp_path, str(first), str(second))
    told = again.next()
    assert (told["run"], told["rule"], told["exception"]) == ("exp/train", "crash", CRASH_EXCEPTION)
    assert again.none_within(QUIET_S)
    assert again.stop() == 0
