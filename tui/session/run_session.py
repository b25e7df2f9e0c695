"""One watched run, as one object: what ``check`` reads once and the dashboard follows.

Before this, a run's wiring (source → feed → model → rules, the logger
files, the accelerators, the alerts) was written out by each command and
again by the app. A session owns all of it, so every command reads a run the
same way, and a fleet view holds several without knowing how any is fed.

The session never draws and never imports Textual: whoever shows it
subscribes with ``listen`` and is told, in one kind of event, that the model,
the accelerators or the source's state changed; when to redraw and when to
judge again is the viewer's choice (``judge`` is cheap to call often and
time-budgeted).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tui.model.accelerators import AcceleratorHistory
from tui.model.run_model import RunModel
from tui.parsers.records import Sample
from tui.parsers.run_config import CONFIG_HEAD_BYTES, RunConfig, parse_run_config
from tui.parsers.run_start import START_HEAD_BYTES, training_start
from tui.parsers.samples import parse_samples
from tui.parsers.text import decode
from tui.report.verdict import SHOWN_SAMPLES
from tui.rules.engine import RuleEngine
from tui.rules.eta import overdue_s
from tui.rules.stall_phase import phase_allowance
from tui.rules.findings import Finding
from tui.rules.rule_file import RuleSpec, load_rules
from tui.session.run_mutes import RunMutes
from tui.session.accelerators import feed_accelerators
from tui.session.alerts import CriticalAlerts, run_hook
from tui.session.feed import Feed
from tui.session.parse_pool import ParsePool
from tui.session.process_reads import log_file, log_host, read_processes, reachable_processes
from tui.session.logger_feeds import (
    JsonlFeed,
    TensorBoardFeed,
    logger_feeds,
    read_logger_files,
)
from tui.sources.accelerators.detect import NONE_FOUND
from tui.sources.accelerators.hosts import AcceleratorHost, other_host
from tui.sources.accelerators.snapshot import take_snapshot
from tui.sources.base import JobSource, LogSource, Reset, SourceError, Status
from tui.sources.process_states import py_spy_dump
from tui.sources.run_folder import RunFolder, folder_for

# A printed sample block is a prompt and a response: this much text holds one.
_SAMPLE_BYTES = 256 * 1024
# How often a stuck run's processes are read while followed (the devices are read every 2 s;
# a hang's processes change slower, and a healthy run's are not read at all).
PROCESS_READ_S = 10.0
# The pause between ``check``'s two readings of a stuck run's processes (their CPU use between).
CHECK_PROCESS_PAUSE_S = 1.0

NoticeLevel = Literal["ok", "notice", "error"]


@dataclass(frozen=True, slots=True)
class RunChanged:
    """Something a viewer shows changed: the model (its steps, values, failures), the
    accelerator readings, or the source's state (``notice``: one line for the user)."""

    model: bool = False
    accelerators: bool = False
    notice: tuple[str, NoticeLevel] | None = None
    # The log has been read to the end it had when followed (once a session): a fleet
    # draws the run's row now rather than at its next round.
    caught_up: bool = False
    # The log was truncated or replaced: what it said before is a past run's.
    reset: bool = False


Listener = Callable[[RunChanged], None]


class RunSession:
    """One run's source, the feeds into its model, its rules, alerts and accelerator pollers."""

    def __init__(self, source: LogSource, *, rules: list[RuleSpec] | None = None,
                 run_dir: Path | None = None, label: str | None = None, note: str | None = None,
                 gpu_hosts: tuple[str, ...] = (), watch_accelerators: bool = True,
                 accept_new_host_key: bool = False, on_critical: str | None = None,
                 parse_pool: ParsePool | None = None, known_total: int | None = None,
                 mutes: RunMutes | None = None) -> None:
        """``run_dir``: the run directory the user named, where the file logger's JSONL,
        TensorBoard events and dumps may lie beside the console log; ``label``: how the run
        is named to the user (default: the source's label); ``note``: a line for the user
        about which log was chosen; ``gpu_hosts``: other nodes whose accelerators belong to
        the run (``watch_accelerators`` False: none at all, as for the demo's replay);
        ``on_critical``: a shell command run with each new critical finding as JSON;
        ``parse_pool``: worker processes that parse the log's big batches (a fleet's);
        ``known_total``: the run's total steps known from outside its log (the demo's replay
        holds its whole run), as if the run had printed it; a total the log prints wins;
        ``mutes``: where the rules the user muted on this run are kept (None: nowhere)."""
        self.source = source
        self.label = label or source.label
        self.note = note
        self.model = RunModel(source.label)
        self.model.announced_total = known_total
        self.accelerators = AcceleratorHistory()
        self.mutes = mutes
        self.engine = RuleEngine(rules if rules is not None else load_rules(),
                                 mutes.load() if mutes is not None else None)
        self.findings: list[Finding] = []
        self.folder: RunFolder | None = folder_for(source, run_dir)
        self.gpu_hosts = gpu_hosts
        self.watch_accelerators = watch_accelerators
        self.accept_new_host_key = accept_new_host_key
        self.on_critical = on_critical
        self.parse_pool = parse_pool
        self._alerts = CriticalAlerts()
        self._listeners: list[Listener] = []
        self._critical_listeners: list[Callable[[list[Finding]], None]] = []
        self._hooks: set[asyncio.Task[None]] = set()
        # The job's nodes whose accelerators are followed (a Ray or Slurm job's ``nodes``).
        self._nodes: dict[str, asyncio.Task[None]] = {}
        self._following = False
        # How much of the log's head the last look for its config saw.
        self._config_seen = -1
        # The hosts whose devices are read, by name: their processes are read there too.
        self._hosts: dict[str, AcceleratorHost] = {}

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` with each change from now on (on the session's event loop)."""
        self._listeners.append(listener)

    def listen_criticals(self, listener: Callable[[list[Finding]], None]) -> None:
        """Call ``listener`` with the critical findings ``new_criticals`` announces (``--notify``)."""
        self._critical_listeners.append(listener)

    def _tell(self, change: RunChanged) -> None:
        for listener in self._listeners:
            listener(change)

    def _notice(self, text: str, level: NoticeLevel) -> None:
        self._tell(RunChanged(notice=(text, level)))

    async def connect(self, connecting: Awaitable[str | None] | None = None) -> str | None:
        """Get the source ready (SourceError if it cannot be read); the line worth telling
        the user about which log was chosen, or None. ``connecting``: the source's own
        ``connect()``, begun before the session was made."""
        note = await (connecting if connecting is not None else self.source.connect()) or self.note
        self.model.log = self.source.label
        return note

    async def close(self) -> None:
        """Release the source's connection and files; hooks still running are left to finish."""
        await self.source.close()

    async def load(self, accelerators: bool = False) -> list[str]:
        """Read the run once to its current end: the log, then the JSONL and event files it
        points at (their exact values replace the console's text); with ``accelerators``, one
        reading of the run's own host. Returns lines for the user (files merged, problems)."""
        await Feed(self.source, self.model, pool=self.parse_pool).run(follow=False)
        if self._may_stall():
            await self.read_config()
        notes = list(await read_logger_files(self.model, self.folder))
        if not self.model.has_training_output():
            await self._read_start()
        if accelerators:
            for host in await self._hosts_to_read(notes):
                self._hosts[host.name] = host
                snapshot = await take_snapshot(host.runner, host.name, local=host.local)
                if snapshot.problem and snapshot.problem != NONE_FOUND:
                    notes.append(f"{snapshot.host}: {snapshot.problem}")
                self.accelerators.add(snapshot.samples, time.time())
        return notes

    async def _hosts_to_read(self, notes: list[str]) -> list[AcceleratorHost]:
        """The hosts whose accelerators are the run's: a scheduler's job's nodes (as it names
        them, none while it is queued; ``notes`` gets the ones that cannot be reached), else
        the log's own host."""
        source, job = self.source, self.model.job
        if not isinstance(source, JobSource) or job is None:
            return [source.accelerator_host()]
        hosts = [source.accelerator_host()] if source.own_host_runs_job else []
        for node in job.nodes:
            try:
                hosts.append(await source.node_host(node))
            except SourceError as error:
                # A connection error names its host already ("10.0.0.2: cannot connect …").
                said = str(error)
                notes.append(said if said.startswith(f"{node}:") else f"{node}: {said}")
        return hosts

    async def printed_samples(self) -> list[Sample]:
        """The newest validation samples the run printed, read by byte range from its log."""
        samples = []
        for offset in self.model.sample_offsets[-SHOWN_SAMPLES:]:
            text = decode(await self.source.read_range(offset, offset + _SAMPLE_BYTES))
            found = parse_samples(text, offset)
            if found:
                samples.append(found[0])
        return samples

    async def read_config(self) -> RunConfig | None:
        """The settings the run printed at start (``model.config``), read from the log's
        first CONFIG_HEAD_BYTES by range, once: a log that has not printed them yet (or
        only its launch command) is looked at again when it has grown, until it is
        longer than that head.

        A one-off read rather than a grammar in the scanner: the config is printed
        once, at the top, and the scanner's line filter stays as narrow as it is fast.
        """
        model, config = self.model, self.model.config
        if (config is not None and config.complete) or \
                self._config_seen >= min(model.read_to, CONFIG_HEAD_BYTES):
            return config
        try:
            head = await self.source.read_range(0, CONFIG_HEAD_BYTES)
        except SourceError:
            return None  # the comparison shows no settings for this run; its curves still come
        self._config_seen = len(head)
        model.config = parse_run_config(head)
        return model.config

    async def _read_start(self) -> None:
        """A log with nothing a run prints later (no step, bar, failure or end): whether its
        head shows a trainer starting (``model.start_seen``), so a run hung before its first
        step is judged as one rather than taken for some other text."""
        try:
            head = await self.source.read_range(0, START_HEAD_BYTES)
        except SourceError:
            return
        self.model.start_seen = training_start(head)

    def stuck(self, now: float) -> bool:
        """Whether the run looks stuck: stalled by the rules' last word, or its last step
        overdue (``tui.rules.eta``). Only then are its processes worth reading."""
        model = self.model
        if any(finding.rule == "stalled" for finding in self.findings):
            return True
        return not model.finished and overdue_s(model.last_step_at, model.sec_per_it, now,
                                                phase_allowance(model)) is not None

    async def read_processes(self, again_after_s: float = 0.0) -> bool:
        """Read the run's processes once into ``model.processes`` (``tui.session.process_reads``),
        and again ``again_after_s`` later in the same round trip unless it is 0; True when any
        host answered."""
        return await read_processes(self.model, self.accelerators, log_host(self.source), self._hosts,
                                    again_after_s, log_file(self.source))

    async def read_stuck_processes(self, pause_s: float = CHECK_PROCESS_PAUSE_S) -> bool:
        """For a run read once (``check``) that looks stuck: its processes read twice,
        ``pause_s`` apart (their CPU use between the two), one session on each host; True when read."""
        if not self.watch_accelerators or not self.stuck(time.time()):
            return False
        return await self.read_processes(again_after_s=pause_s)

    async def py_spy_dump(self) -> tuple[str, str]:
        """``py-spy dump`` of the run's trainer (the log's own process, else the first device
        holder still there), where py-spy is already installed on its host: (what was
        dumped, py-spy's output, untrusted text). SourceError with a one-line reason
        otherwise: no pid known, the process gone, py-spy not installed (rlwatch installs
        nothing), or py-spy's own failure (ptrace not permitted)."""
        watched, hosts = reachable_processes(self.model, self.accelerators, log_host(self.source), self._hosts)
        await self.read_processes()  # asks where py-spy is, on the same round trip
        writers = self.model.processes.writers
        if not watched and writers is not None:  # found by who writes the log, in that read
            watched = list(writers.found)
        if not watched:
            raise SourceError("no trainer pid known: the log's steps carry no process prefix, "
                              "no device lists a process and nothing here has the log open for writing")
        readings = {(latest.watched.host, latest.watched.pid): latest
                    for _, latest in self.model.processes.latest(-math.inf)}
        alive = [w for w in watched if (r := readings.get((w.host, w.pid))) is not None and r.stat is not None]
        if not alive:
            raise SourceError(f"pid {watched[0].pid} is gone from {watched[0].host}: nothing to dump")
        target = alive[0]
        path = self.model.processes.py_spy.get(target.host)
        if path is None:
            raise SourceError(f"py-spy is not installed on {target.host}; rlwatch never installs anything")
        text = await py_spy_dump(hosts[target.host], path, target.pid)
        return f"py-spy dump --pid {target.pid} on {target.host} ({target.origin})", text

    def judge(self, now: float | None = None, budget_s: float | None = None) -> list[Finding]:
        """Judge the run with the rules (within ``budget_s`` seconds, the rest next time:
        ``engine.behind``); the findings are kept in ``findings`` too."""
        self.findings = self.engine.evaluate(self.model, time.time() if now is None else now,
                                             budget_s, self.accelerators)
        return self.findings

    def toggle_mute(self, rule: str) -> bool:
        """Mute ``rule``'s findings on this run as they stand (a later event of it stands
        again), or unmute them where they are muted; kept for the next time (an OSError says
        it could not be kept; it holds for this session all the same). Returns whether
        they are muted now."""
        own = [finding for finding in self.findings if finding.rule == rule]
        muted = not any(finding.muted for finding in own)
        if muted:
            steps = [finding.last_step for finding in own if finding.last_step is not None]
            self.engine.muted[rule] = max(steps, default=None)
        else:
            self.engine.muted.pop(rule, None)
        if self.mutes is not None:
            self.mutes.save(self.engine.muted)
        return muted

    def new_criticals(self) -> list[Finding]:
        """The critical findings not announced before, each announced now: the ``--on-critical``
        command runs with it (its problems come back as notices), and the ``listen_criticals``
        listeners are given them. The bell is the viewer's."""
        fresh = self._alerts.new(self.findings)
        if fresh:
            for listener in self._critical_listeners:
                listener(fresh)
        if self.on_critical:
            for finding in fresh:
                self._spawn(self._hook(self.on_critical, finding))
        return fresh

    async def _hook(self, command: str, finding: Finding) -> None:
        problem = await run_hook(command, finding, self.model.log)
        if problem:
            self._notice(problem, "error")

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._hooks.add(task)  # held: the loop keeps only weak references to tasks
        task.add_done_callback(self._hooks.discard)

    async def follow(self) -> None:
        """Follow the run until cancelled: the log, its logger files, the accelerators of its
        host and ``gpu_hosts``. A part that fails says so in a notice; the others go on."""
        parts = [self._follow_log(), self._follow_logger_files()]
        if self.watch_accelerators:
            # A job's other nodes come as the scheduler names them (_follow_new_nodes).
            if not isinstance(self.source, JobSource) or self.source.own_host_runs_job:
                parts.append(self._follow_accelerators(self.source.accelerator_host()))
            parts += [self._follow_other_host(host) for host in self.gpu_hosts]
            parts.append(self._follow_processes())
        self._following = True
        try:
            await asyncio.gather(*parts)
        finally:
            self._following = False
            for task in self._nodes.values():
                task.cancel()

    async def _follow_log(self) -> None:
        feed = Feed(self.source, self.model, on_change=self._model_changed, on_status=self._source_event,
                    pool=self.parse_pool, on_caught_up=self._caught_up)
        await self._until_error(feed.run(follow=True))

    async def _follow_logger_files(self) -> None:
        """Merge the run's JSONL and TensorBoard values too, where the log points at them."""
        if self.folder is None:
            return
        try:
            feeds, notes = await logger_feeds(self.folder, self.model, self._model_changed)
        except SourceError as error:
            self._notice(f"the run's logger files were not read: {error}", "error")
            return
        for note in notes:
            self._notice(note, "notice")
        await asyncio.gather(*(self._follow_logger(feed) for feed in feeds))

    async def _follow_logger(self, feed: JsonlFeed | TensorBoardFeed) -> None:
        await self._until_error(feed.run(follow=True))

    async def _until_error(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except SourceError as error:
            self._notice(str(error), "error")

    async def _follow_accelerators(self, host: AcceleratorHost) -> None:
        self._hosts[host.name] = host
        await feed_accelerators(host, self.accelerators, self._accelerators_changed)

    async def _follow_processes(self) -> None:
        """Read the run's processes every ``PROCESS_READ_S`` while it looks stuck, and have
        the run judged again with them."""
        while True:
            await asyncio.sleep(PROCESS_READ_S)
            if self.stuck(time.time()) and await self.read_processes():
                self._tell(RunChanged(model=True))

    async def _follow_other_host(self, name: str) -> None:
        try:
            host = await other_host(name, self.accept_new_host_key)
        except SourceError as error:
            self.accelerators.set_status(name, str(error), False, time.time())
            self._accelerators_changed()
            return
        await self._follow_accelerators(host)

    async def _follow_node(self, source: JobSource, name: str) -> None:
        try:
            host = await source.node_host(name)
        except SourceError as error:
            self.accelerators.set_status(name, str(error), False, time.time())
            self._accelerators_changed()
            return
        await self._follow_accelerators(host)

    def _follow_new_nodes(self) -> None:
        """Start reading the accelerators of the job's nodes not read yet (a scheduler's
        word on where the job runs replaces the ``--gpus`` hand list)."""
        job, source = self.model.job, self.source
        if job is None or not self._following or not self.watch_accelerators \
                or not isinstance(source, JobSource):
            return
        for node in job.nodes:
            if node not in self._nodes and node not in self.gpu_hosts:
                self._nodes[node] = asyncio.get_running_loop().create_task(self._follow_node(source, node))

    def _model_changed(self) -> None:
        self._follow_new_nodes()
        self._tell(RunChanged(model=True))

    def _caught_up(self) -> None:
        self._tell(RunChanged(model=True, caught_up=True))
        if self._may_stall():
            self._spawn(self._config_read())

    def _may_stall(self) -> bool:
        """Whether the run may yet stall after a step: a stall then says what the step under
        way was due to do by the printed save_freq/test_freq (``tui.rules.stall_phase``), so
        the config is read (once, by range) for a run with steps that has not finished."""
        return self.model.last_step is not None and not self.model.finished

    async def _config_read(self) -> None:
        """The printed config read into the model, and the screens told."""
        if await self.read_config() is not None:
            self._tell(RunChanged(model=True))

    def _accelerators_changed(self) -> None:
        self._tell(RunChanged(accelerators=True))

    def _source_event(self, event: Status | Reset) -> None:
        if isinstance(event, Reset):
            self._alerts.reset()  # the findings to come are a new run's
            self._tell(RunChanged(model=True, notice=(event.reason, "notice"), reset=True))
        else:
            self._notice(event.text, "ok" if event.ok else "error")
