"""What the tests share, in one module, so a test file never imports another test file.

Waiting (bounded), import hygiene, running the command as a user does, driving the
dashboard and its screens on real logs, and the runs, logger files and SSH boxes
that several test files build the same way.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.summary.writer.event_file_writer import EventFileWriter
from tensorboardX import SummaryWriter
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import DataTable

from tests.corpus import verl_log
from tests.parsers.smi.corpus_files import H100_CAPTURE
from tests.sources.accelerators.replay import install, path_with
from tests.sshd import ClientHome
from tui.model.accelerators import AcceleratorHistory
from tui.model.run_model import RunModel
from tui.parsers.run_config import parse_run_config
from tui.parsers.smi.nvidia_query_csv import parse_gpus
from tui.parsers.smi.records import AcceleratorSample, on_host
from tui.parsers.log_scanner import NEEDLES, LogScanner
from tui.parsers.verl_jsonl import JsonlScanner
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import load_rules
from tui.session.feed import Feed
from tui.session.run_session import RunSession
from tui.sources.base import LogSource
from tui.sources.local_file import LocalFile
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget
from tui.sources.tensorboard_events import TensorBoardDir
from tui.ui.app import RlwatchApp
from tui.ui.appearance import Appearance
from tui.ui.screens.processes import (
    ProcessesScreen,
)
from tui.ui.screens.step_detail import StepDetailScreen
from tui.ui.screens.steps import StepsScreen
from tui.ui.widgets.metric_panel import MetricPanel, PanelStats
from tui.ui.widgets.sample_card import SampleCard
from tui.ui.widgets.step_dumps import StepDumps
from tui.ui.widgets.step_metrics import StepMetrics
from tui.ui.widgets.step_table import StepTable

RUN = verl_log("032")  # a whole real GRPO run: step lines, sample dumps, validation


async def until(condition: Callable[[], object], timeout: float = 5.0, what: str = "the condition",
                pause: Callable[[float], Awaitable[object]] = asyncio.sleep) -> float:
    """Look at ``condition`` every 10 ms until it is true; return how long that took.

    Bounded: past ``timeout`` it fails with what it waited for, so a hang fails
    the test rather than stalling the suite.
    """
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await pause(0.01)
    return time.monotonic() - start


def packages_loaded_by(code: str, packages: Iterable[str]) -> list[str]:
    """Run ``code`` in a new Python; which of the top-level ``packages`` are then imported, sorted."""
    probe = (f"{code}\nimport sys\n"
             f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(packages)!r}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip())


def step_lines(count: int) -> list[bytes]:
    """The first ``count`` step lines of the real run."""
    lines = [line for line in RUN.read_bytes().splitlines(keepends=True) if line.startswith(b"step:")]
    return lines[:count]


def metric(line: bytes, key: str) -> float:
    """One value from a step line, for the expectations (the app parses on its own)."""
    return float(re.search(re.escape(key.encode()) + rb":([-0-9.e]+)", line).group(1))


def text_of(widget: Widget) -> str:
    """What the widget draws itself (border, titles and its own content), as plain text."""
    width, height = widget.outer_size
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, width, height)))


def header_text(app: RlwatchApp) -> str:
    return text_of(app.dashboard.header)


def shown_step(app: RlwatchApp) -> str | None:
    """The ``step N[/total]`` the header shows, or None before the first step."""
    match = re.search(r"\bstep (\S+)", header_text(app))
    return match.group(1) if match else None


def panel(app: RlwatchApp, concept_id: str) -> MetricPanel:
    return app.dashboard.query_one(f"#panel-{concept_id}", MetricPanel)


def stats_text(app: RlwatchApp, concept_id: str) -> str:
    return text_of(panel(app, concept_id).query_one(PanelStats))


async def wait_for(pilot: Pilot[None], condition: Callable[[], object], what: str,
                   timeout: float = 5.0) -> None:
    """``until``, for a running app: between looks the pilot lets the app handle its messages."""
    await until(condition, timeout, what, pause=pilot.pause)


class RecordingApp(RlwatchApp):
    """The real app, counting the bells it rings (a BEL is invisible to the pilot)."""

    bells = 0

    def bell(self) -> None:
        self.bells += 1


def dashboard_on(source: LogSource, *, app: type[RlwatchApp] = RlwatchApp,
                 appearance: Appearance | None = None, name: str | None = None,
                 **session: Any) -> RlwatchApp:
    """The app on one session over ``source`` (``session``: RunSession's options), as
    ``rlwatch PATH`` builds it; ``app`` another class of it (``RecordingApp``)."""
    return app([RunSession(source, **session)], name=name, appearance=appearance)


def open_app(path: Path) -> RlwatchApp:
    """The app following the log at ``path`` (polled quickly, so tests wait little)."""
    return dashboard_on(LocalFile(path, poll_seconds=0.05))


def healthy_then_nan(tmp_path: Path) -> tuple[Path, bytes]:
    """032's first 30 real step lines (entropy below 0.1 later, KL above 0.03), then a nan loss."""
    lines = step_lines(30)
    nan_line = lines[-1].replace(b"step:30 ", b"step:31 ", 1)
    nan_line = nan_line.replace(b"actor/pg_loss:", b"actor/pg_loss:nan - was/pg_loss:", 1)
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(lines))
    return log, nan_line


# Running the command, as a user does

RLWATCH = Path(sys.executable).parent / "rlwatch"  # the installed entry point


def rlwatch(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``rlwatch ARGS`` in a fresh interpreter, its output captured."""
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True,
                          timeout=60, env=env)


# Snapshots


SNAPSHOTS = Path(__file__).parent / "ui" / "snapshots"


def match_snapshot(name: str, svg: str) -> None:
    """Fail where ``svg`` differs from ``SNAPSHOTS/NAME.svg``, leaving ``NAME.new.svg`` beside
    it to compare; write it where there is none yet or ``RLWATCH_UPDATE_SNAPSHOTS`` is set."""
    expected, fresh = SNAPSHOTS / f"{name}.svg", SNAPSHOTS / f"{name}.new.svg"
    if os.environ.get("RLWATCH_UPDATE_SNAPSHOTS") or not expected.exists():
        expected.write_text(svg, encoding="utf-8")
        fresh.unlink(missing_ok=True)
        return
    if svg != expected.read_text(encoding="utf-8"):
        fresh.write_text(svg, encoding="utf-8")
        raise AssertionError(f"{name} changed: compare {fresh} with {expected} "
                             "(RLWATCH_UPDATE_SNAPSHOTS=1 accepts the new one)")
    fresh.unlink(missing_ok=True)


# Event files, read back


def bits(value: float) -> bytes:
    """Equality that holds for NaN too."""
    return struct.pack("d", value)


def read_back(directory: Path) -> dict[str, dict[int, float]]:
    out: dict[str, dict[int, float]] = {}
    reader, more = TensorBoardDir(directory), True
    while more:
        records, more = reader.poll()
        for record in records:
            for key, value in record.metrics.items():
                out.setdefault(key, {})[record.step] = value
    return out


def accumulated(directory: Path) -> dict[str, dict[int, bytes]]:
    """What tensorboard's EventAccumulator lists as scalars (every point: no sampling)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(directory), size_guidance={"scalars": 0})
    accumulator.Reload()
    return {tag: {event.step: bits(event.value) for event in accumulator.Scalars(tag)}
            for tag in accumulator.Tags()["scalars"]}


# Run directories as verl leaves them


def tensorboard_only(tmp_path: Path) -> Path:
    """A run directory as verl leaves it with trainer.logger=['tensorboard'] and no kept
    console: the resumed fixture (two event files) for proj/exp, and an older experiment."""
    run = tmp_path / "run"
    # copytree keeps the fixture's mtimes (when the checkout was made): written just now
    # instead, as a live run's are, so "newest" does not depend on the checkout's age.
    shutil.copytree(RESUMED, run / "tensorboard_log" / "proj" / "exp", copy_function=shutil.copy)
    tensorboardx_run(run / "tensorboard_log" / "proj" / "older", range(3), age_s=3600)
    return run

# Real outputs of verl 0.9.1's own Tracking code (torch's SummaryWriter, verl's FileLogger);
# see tests/fixtures/logs/generated/verl/MANIFEST.md on branch corpus-ray.
GENERATED = Path(__file__).resolve().parent / "fixtures" / "logs" / "generated" / "verl"


def without_console(name: str, tmp_path: Path) -> Path:
    """verl's run directory as it is when the console was not kept."""
    run = tmp_path / name
    # Written just now, as a live run's files are (copytree would keep the checkout's
    # mtimes, and which file is newest would then depend on the checkout's age).
    shutil.copytree(GENERATED / name, run, copy_function=shutil.copy)
    (run / "console.log").unlink()
    return run


def hydra_leftovers(run: Path, age_s: float) -> Path:
    """Hydra's job log of a verl run (verl prints to stdout, so it holds only stray logging).

    Two folders down, not Hydra's default three (``outputs/<date>/<time>/``): log discovery
    on the box looks one level less deep than on local disk, and both must find it here.
    """
    log = run / "outputs" / "01-18-00" / "main_ppo.log"
    log.parent.mkdir(parents=True)
    log.write_text("[2026-11-24 01:18:02,113][torch.distributed][WARNING] - slow init\n")
    os.utime(log, (time.time() - age_s, time.time() - age_s))
    return log


# Accelerator readings

H100_REAL_FIELDS = ("index,name,uuid,pci.bus_id,driver_version,utilization.gpu,utilization.memory,memory.used,"
                    "memory.total,memory.free,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.mem,"
                    "fan.speed,pstate,mig.mode.current,ecc.errors.uncorrected.volatile.total").split(",")


READINGS = json.loads((H100_CAPTURE / "readings.json").read_text())


# Corpus runs, judged

NOW = 2_000_000_000.0


def model_of(prefix: str, written_at: float = NOW) -> RunModel:
    scanner = LogScanner()
    model = RunModel()
    data = verl_log(prefix).read_bytes()
    model.apply(scanner.feed(data) + scanner.finish(), now=written_at)
    model.note_write(written_at)
    return model


def findings_of(model: RunModel, now: float = NOW) -> dict[str, list]:
    out: dict[str, list] = {}
    for finding in RuleEngine(load_rules()).evaluate(model, now):
        out.setdefault(finding.rule, []).append(finding)
    return out


# Logger files: verl's JSONL and TensorBoard events

FIXTURES = Path(__file__).resolve().parent / "fixtures"

JSONL = FIXTURES / "jsonl" / "v0.6_json_dumps.jsonl"

RESUMED = FIXTURES / "tensorboard" / "resumed"

CONFIG = ("(TaskRunner pid=7) {{'trainer': {{'experiment_name': 'exp',\n"
          "(TaskRunner pid=7)              'logger': [{loggers}],\n"
          "(TaskRunner pid=7)              'project_name': 'proj'}}}}\n")


def exact_steps() -> list:
    scanner = JsonlScanner()
    return scanner.feed(JSONL.read_bytes()) + scanner.finish()


def write_scalar(writer: EventFileWriter, step: int, tag: str, value: float) -> None:
    """One scalar, as torch's ``add_scalar`` writes it, flushed to the file."""
    event = Event(step=step, wall_time=1.0)
    event.summary.value.add(tag=tag, simple_value=value)
    writer.add_event(event)
    writer.flush()


def three_decimal_run(tmp_path: Path, loggers: str) -> Path:
    """The fixture's values as verl ≤ v0.4 printed them to the console (``f"{k}:{v:.3f}"``)."""
    lines = [CONFIG.format(loggers=loggers)]
    for record in exact_steps():
        items = " - ".join(f"{key}:{value:.3f}" for key, value in record.metrics.items())
        lines.append(f"(TaskRunner pid=7) step:{record.step} - {items}\n")
    (tmp_path / "grpo.log").write_text("".join(lines))
    return tmp_path


def same(a: float | str, b: float) -> bool:
    return a == b or (a in ("nan", "inf", "-inf") and repr(b) == a)


# Boxes over SSH

HOURS = 3600.0

DATE, STAT = shutil.which("date"), shutil.which("stat")

# A box five hours ahead: only its `date +%s` says so (its files' times come from this
# machine's kernel, so the tests set them as that box would have written them).
SKEWED_DATE = (f'#!/bin/sh\nif [ "$#" = 1 ] && [ "$1" = "+%s" ]; then\n'
               f'  echo $(( $({DATE} +%s) + 5 * 3600 )); exit 0\nfi\nexec {DATE} "$@"\n')


def touch(path: Path, when: str) -> None:
    """``touch -d``, as a user would age a file by hand."""
    subprocess.run(["touch", "-d", when, str(path)], check=True)


def stalled_of(done: subprocess.CompletedProcess) -> dict:
    (finding,) = [f for f in json.loads(done.stdout)["findings"] if f["rule"] == "stalled"]
    return finding


def rlwatch_as(home: ClientHome, *args: str) -> subprocess.CompletedProcess:
    """The installed command as a user whose home is ``home`` (its ssh config and keys)."""
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True,
                          env=home.env(), timeout=120, stdin=subprocess.DEVNULL)


def comparable(result: dict) -> dict:
    """The JSON without what names the place (target and log path)."""
    result = dict(result, run=dict(result["run"]))
    result.pop("target")
    result["run"].pop("log")
    return result


@asynccontextmanager
async def following(log, on_status=None, host: str = "gpu",
                    notes: list[str] | None = None) -> AsyncIterator[RunModel]:
    """A model fed by a RemoteLog of ``log`` through the ``host`` alias, following until the block
    ends; ``notes`` gets the connection's note for the user (which log of a folder it chose)."""
    source = RemoteLog(RemoteTarget(host, str(log)), NEEDLES)
    note = await source.connect()
    if notes is not None and note is not None:
        notes.append(note)
    model = RunModel()
    task = asyncio.create_task(Feed(source, model, on_status=on_status).run(follow=True))
    try:
        yield model
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await source.close()


JSONL_V06 = FIXTURES / "jsonl" / "v0.6_json_dumps.jsonl"

JSONL_V071 = FIXTURES / "jsonl" / "v0.7.1_orjson.jsonl"


def tensorboardx_run(directory: Path, steps: range, age_s: float = 0.0) -> Path:
    """An experiment's event directory as a run with trainer.logger=['tensorboard'] leaves it."""
    writer = SummaryWriter(str(directory))
    for step in steps:
        writer.add_scalar("critic/score/mean", step / 10, step)
        writer.add_scalar("actor/pg_loss", -step / 100, step)
    writer.close()
    if age_s:
        for path in directory.iterdir():
            os.utime(path, (time.time() - age_s, time.time() - age_s))
    return directory


def dumps(directory: Path) -> None:
    """A rollout dump directory: JSONL files of another schema, which are not a run."""
    directory.mkdir(parents=True)
    for step in (1, 2):
        (directory / f"{step}.jsonl").write_text(
            json.dumps({"input": "q", "output": "a", "score": 1.0, "step": step}) + "\n")


# Driving the screens


def rows_of(app: RlwatchApp) -> list[list[str]]:
    table = app.screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(row)] for row in range(table.row_count)]


def app_on(tmp_path, monkeypatch, tool: str | None = None, config: dict | None = None) -> RlwatchApp:
    """The app on a three-step log, with ``tool`` replaying ``config`` as this machine's only
    accelerator tool (none at all without one)."""
    if tool is not None:
        install(tmp_path / "bin", tool, config)
    monkeypatch.setenv("PATH", path_with(tmp_path / "bin"))
    log = tmp_path / "grpo.log"
    log.write_bytes(b"".join(step_lines(3)))
    return open_app(log)


async def open_processes(pilot, app: RlwatchApp, rows: int) -> list[list[str]]:
    """Press ``p`` on the dashboard and wait for ``rows`` rows."""
    await pilot.press("p")
    await wait_for(pilot, lambda: isinstance(app.screen, ProcessesScreen), "the processes screen")
    await wait_for(pilot, lambda: app.screen.query_one(DataTable).row_count == rows, f"{rows} rows",
                   timeout=20)
    return rows_of(app)


def step_line(step: int) -> bytes:
    """The real run's line for ``step``."""
    prefix = f"step:{step} ".encode()
    return next(line for line in RUN.read_bytes().splitlines(keepends=True) if line.startswith(prefix))


def first_steps(folder: Path, last: int) -> Path:
    """A ``grpo.log`` in ``folder`` with the real run's lines for steps 1 to ``last``."""
    log = folder / "grpo.log"
    log.write_bytes(b"".join(step_line(step) for step in range(1, last + 1)))
    return log


def table(app: RlwatchApp) -> StepTable:
    return app.screen.query_one(StepTable)


async def open_steps(pilot, app: RlwatchApp) -> None:
    await pilot.press("s")
    await wait_for(pilot, lambda: isinstance(app.screen, StepsScreen), "the steps screen")


async def go_to_step(pilot, app: RlwatchApp, step: int) -> None:
    """On the steps screen: g, the number, enter."""
    await pilot.press("g", *str(step), "enter")
    await wait_for(pilot, lambda: table(app).cursor_step == step, f"the cursor on step {step}")


async def open_detail(pilot, app: RlwatchApp, step: int) -> StepDetailScreen:
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen) and app.screen.step == step,
                   f"the detail of step {step}")
    return app.screen


async def highlight_metric(pilot, app: RlwatchApp, key: str) -> None:
    """Move the metrics cursor down to ``key`` with the arrow key."""
    metrics = app.screen.query_one(StepMetrics)
    for _ in range(metrics.row_count):
        if metrics.highlighted_key == key:
            return
        await pilot.press("down")
    raise AssertionError(f"{key} is not among the step's metrics")


def write_dumps(run_dir: Path, step: int) -> None:
    """verl-style dumps for ``step``: rollouts (legacy rows with ``acc``) and validation."""
    rollouts = run_dir / "rollout_dumps"
    validation = run_dir / "val_generations"
    rollouts.mkdir()
    validation.mkdir()
    rows = [{"input": f"question {i}", "output": f"answer {i}", "gts": "4", "score": score,
             "step": step, "acc": score > 0}
            for i, score in enumerate([0.0, 1.0, 0.5, 1.0])]
    (rollouts / f"{step}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (validation / f"{step}.jsonl").write_text(json.dumps(
        {"input": "val question", "output": "val answer", "gts": "7", "score": 1.0, "step": step,
         "reward": 1.0}) + "\n")


async def open_dumps(pilot, app: RlwatchApp, step: int, count: int) -> StepDumps:
    """Steps → g ``step`` → the detail's Dumps tab, once its ``count`` dump files are read."""
    await open_steps(pilot, app)
    await go_to_step(pilot, app, step)
    await open_detail(pilot, app, step)
    await pilot.press("d")
    dumps = app.screen.query_one(StepDumps)
    await wait_for(pilot, lambda: len(dumps.dumps) == count, f"{count} dump file(s) read")
    return dumps


async def worst_sample_of_step_2(pilot, app: RlwatchApp) -> str:
    """Steps → g 2 → the detail's Dumps tab (``write_dumps``' samples) → end: the reader's text."""
    await wait_for(pilot, lambda: app.model.step_count == 4, "4 steps")
    dumps = await open_dumps(pilot, app, 2, 2)
    # The summary is drawn at its new height once laid out again, a frame after the files are
    # read (on a loaded machine the frame came after the first look).
    await wait_for(pilot, lambda: "validation  1 samples" in text_of(dumps.query_one("#dump-summary"))
                   and "rollout  4 samples" in text_of(dumps.query_one("#dump-summary")), "the summary")
    assert "above 0: 75%" in text_of(dumps.query_one("#dump-summary"))  # three of four scored
    reader = dumps.query_one(SampleCard)
    assert "val question" in text_of(reader)  # validation first, best first
    await pilot.press("end")  # the worst rollout
    await wait_for(pilot, lambda: "question 0" in text_of(reader), "the worst sample in the reader")
    return text_of(reader)


class RecordingDriver:
    """Stands in for Textual's platform driver: records what would reach the terminal."""

    def __init__(self) -> None:
        self.written: list[str] = []
        self.stopped = False

    def write(self, data: str) -> None:
        self.written.append(data)

    def stop_application_mode(self) -> None:
        self.stopped = True


def count_figure_builds(plot: Any) -> Callable[[], int]:
    """From now on, count the figures plotext builds for the chart ``plot`` (each a quarter
    of a second on a wide chart); the function returned reads the count."""
    builds = 0
    build = plot.plt.build

    def counted() -> str:
        nonlocal builds
        builds += 1
        return build()

    plot.plt.build = counted
    return lambda: builds


# Real accelerator readings of a hang

HANGS = Path(__file__).resolve().parent / "fixtures" / "logs" / "generated" / "hangs"
DDP = HANGS.parent / "ddp"


def hang_readings() -> list[tuple[float, list[AcceleratorSample]]]:
    """Each reading of ddp/nccl_rank1_hang_readings.txt (nvidia-smi on 2×H200 while rank 1
    slept before an all-reduce and rank 0 waited in it): its second of the day and the GPUs' rows."""
    found = []
    for block in (DDP / "nccl_rank1_hang_readings.txt").read_text().split("== ")[1:]:
        stamp, *lines = block.splitlines()
        hours, minutes, seconds = (int(part) for part in stamp.split(":"))
        gpus = lines[:lines.index("pid, gpu_uuid, used_gpu_memory [MiB]")]
        found.append((hours * 3600.0 + minutes * 60 + seconds, on_host(parse_gpus("\n".join(gpus)), "localhost")))
    return found


def hang_model(log: Path, written: float) -> RunModel:
    """The model of a whole hung log as the app builds it (its printed config too), its file
    last written at ``written``."""
    data = log.read_bytes()
    scanner, model = LogScanner(), RunModel(str(log))
    model.config = parse_run_config(data)
    model.apply(scanner.feed(data) + scanner.finish(), now=written)
    model.note_write(written)
    model.read_to = len(data)
    return model


def history_of(readings: list[tuple[float, list[AcceleratorSample]]], start: float,
               history: AcceleratorHistory | None = None) -> AcceleratorHistory:
    """``readings`` added to ``history`` (default: a new one), the first at ``start``."""
    history = history if history is not None else AcceleratorHistory()
    first = readings[0][0]
    for at, samples in readings:
        history.add(samples, start + at - first)
    return history
