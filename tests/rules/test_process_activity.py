"""What a stalled finding says of the trainer's processes, from readings of real hung trainers
(tests/fixtures/logs/generated/hangs and ddp: NAME_proc.txt, two readings 3 s apart while it hung)."""

from __future__ import annotations

from pathlib import Path

from tests.parsers.test_proc_stat import recorded_answers
from tests.rules.test_device_activity import T0
from tests.rules.test_stall_phase import WRITTEN, hang_samples, model_of, stalled
from tests.support import DDP, HANGS, hang_readings, history_of
from tui.model.accelerators import AcceleratorHistory
from tui.model.processes import LOG_ORIGIN, MAX_WATCHED, ProcessReading, ProcessReadings, Watched, watched_processes
from tui.model.run_model import RunModel
from tui.parsers.proc_stat import ProcAnswer, ProcStat, parse_proc_answer
from tui.parsers.log_scanner import LogScanner
from tui.parsers.smi.records import AcceleratorProcess, AcceleratorSample, with_processes
from tui.rules.engine import RuleEngine
from tui.rules.rule_file import load_rules
from tui.rules.process_activity import process_activity, process_words


# Where the test says a recorded pid came from when the log names none (torchrun's ranks): the
# recording itself, read by pid on the box while it hung.
READ_BY_PID = "read on the box while it hung"


def with_recording(model: RunModel, proc: Path, origin: str = LOG_ORIGIN) -> list[int]:
    """``model`` with the recorded readings of ``proc`` (a ``NAME_proc.txt``), read 10 s after
    the last step and 3 s later, each process watched on "box" with ``origin``; their pids in
    the recording's order."""
    pids: list[int] = []
    for number, text in enumerate(recorded_answers(proc.name.removesuffix("_proc.txt"), proc.parent)):
        answer = parse_proc_answer(text)
        assert answer is not None
        pids = list(answer.stats)
        for pid in pids:
            model.processes.add(reading(Watched("box", pid, origin), WRITTEN + 10 + 3 * number, answer, pid))
    return pids


def reading(watched: Watched, at: float, answer: ProcAnswer, pid: int) -> ProcessReading:
    return ProcessReading(watched, at, answer.uptime_s, answer.hz, answer.stats.get(pid), answer.wchans.get(pid))


def test_each_recorded_hang_says_what_its_processes_did():
    """Each hang recorded with its processes' readings (``proc``) says of each what its reader
    expects (``processes``, in the recording's order): the hangs folder's single trainers as the
    log's own, the gloo hang's torchrun agent and two ranks as read by pid (its log names none)."""
    samples = [(folder, sample) for folder, sample in hang_samples() if "proc" in sample]
    assert {folder for folder, _ in samples} == {HANGS, DDP}
    assert len(samples) == 5  # the three phase hangs, the stopped trainer, the gloo rank-1 hang
    for folder, sample in samples:
        model = model_of(folder / sample["file"])
        origin = LOG_ORIGIN if model.steps_pid is not None else READ_BY_PID
        pids = with_recording(model, folder / sample["proc"], origin)
        said = stalled(model).message.split("; processes: ", 1)[1]
        assert len(pids) == len(sample["processes"]), sample["file"]
        for pid, words in zip(pids, sample["processes"]):
            assert f"pid {pid} {words}, up " in said, (sample["file"], said)
        assert f"({origin}, on box)" in said


def test_the_gloo_hang_log_names_no_pid_of_its_ranks():
    """torchrun's workers print their steps without a pid (no ``[rankN]:`` on a step line, no
    Ray prefix): on a CPU box with no accelerator tool to list them, rlwatch has no process of
    this run to read. The pids of the recording come from the box, not from the log."""
    model = model_of(DDP / "gloo_rank1_hang_states_still_hanging.log")
    assert model.steps_pid is None
    assert watched_processes(model.steps_pid, "box", AcceleratorHistory()) == []
    assert "processes:" not in stalled(model).message


def test_the_stopped_trainer_is_the_pid_its_log_names_and_the_finding_says_how_to_go_on():
    model = model_of(HANGS / "stopped_mid_run_still_hanging.log")
    (answer_pid,) = parse_proc_answer(recorded_answers("stopped_mid_run")[0]).stats  # type: ignore[union-attr]
    assert model.steps_pid == answer_pid  # the log's (TaskRunner pid=N) is the process recorded
    assert with_recording(model, HANGS / "stopped_mid_run_proc.txt") == [answer_pid]
    message = stalled(model).message
    assert f"pid {answer_pid} (python) stopped (T: SIGSTOP or ^Z), 0 % CPU over 3 s" in message
    assert message.endswith("a stopped process runs nothing until continued (kill -CONT), and the run waits on it")


def test_readings_from_before_the_last_step_are_not_this_stall():
    model = model_of(HANGS / "save_blocked_at_step8_still_hanging.log")
    watched = Watched("box", 7, LOG_ORIGIN)
    model.processes.add(ProcessReading(watched, WRITTEN - 5, 100.0, 100, stat(7, "S", 0), "futex_do_wait"))
    assert "processes:" not in stalled(model).message


def stat(pid: int, state: str, ticks: int, start: int = 1000, comm: str = "python") -> ProcStat:
    return ProcStat(pid, comm, state, ticks, 1, start)


def words_of(*readings: ProcessReading, since: float = 0.0) -> str:
    held = ProcessReadings()
    for one in readings:
        held.add(one)
    said = process_words(process_activity(held, since))
    assert said is not None
    return said


def test_cpu_is_the_ticks_between_two_readings_over_the_box_clock_and_age_its_start():
    trainer = Watched("node1", 42, LOG_ORIGIN)
    said = words_of(ProcessReading(trainer, 100.0, 500.0, 100, stat(42, "R", 1000), None),
                    ProcessReading(trainer, 110.0, 510.0, 100, stat(42, "R", 2000), None))
    assert said == (f"processes: pid 42 (python) running (R), 100 % CPU over 10 s, up 8 min ({LOG_ORIGIN}, on node1)")


def test_a_process_restarted_under_the_same_pid_has_no_cpu_between():
    trainer = Watched("node1", 42, LOG_ORIGIN)
    said = words_of(ProcessReading(trainer, 100.0, 500.0, 100, stat(42, "S", 9000, start=100), "futex_do_wait"),
                    ProcessReading(trainer, 110.0, 510.0, 100, stat(42, "S", 5, start=50_000), "futex_do_wait"))
    assert "% CPU" not in said


def test_disk_waits_zombies_and_gone_processes_are_said_so():
    trainer, holder = Watched("node1", 42, LOG_ORIGIN), Watched("node1", 43, "holds device 0", True)
    assert "in D (disk or NFS wait, in rpc_wait_bit_killable)" in words_of(
        ProcessReading(trainer, 100.0, 500.0, 100, stat(42, "D", 10), "rpc_wait_bit_killable"))
    assert "a zombie (Z: exited, not reaped)" in words_of(ProcessReading(trainer, 100.0, 500.0, 100, stat(42, "Z", 1), None))
    gone = words_of(ProcessReading(trainer, 100.0, 500.0, 100, None, None))
    assert gone == (f"processes: pid 42 gone: no such process on node1 ({LOG_ORIGIN}); "
                    "the run's processes have ended")
    hidden = words_of(ProcessReading(holder, 100.0, 500.0, 100, None, None))
    assert "not in node1's /proc though an accelerator tool lists it (holds device 0): another pid namespace" in hidden
    assert "have ended" not in hidden


def test_a_pid_now_held_by_a_process_started_after_the_last_step_is_not_the_run():
    trainer = Watched("node1", 42, LOG_ORIGIN)
    # read at 1000 s; up 10 s: it started at 990, long after the last step at 0
    said = words_of(ProcessReading(trainer, 1000.0, 500.0, 100, stat(42, "S", 1, start=49_000, comm="sshd"), None))
    assert said.startswith("processes: pid 42 on node1 is sshd started after the run's last step, not the run's")


def sample(host: str, index: int, *pids: int) -> AcceleratorSample:
    return AcceleratorSample(host, index, None, "H200", 0.0, 1.0, 2.0, 30.0, 100.0,
                             tuple(AcceleratorProcess(pid, "python", 1.0) for pid in pids))


def test_the_watched_are_the_logs_pid_on_its_host_and_the_device_holders_bounded():
    history = AcceleratorHistory()
    history.add([sample("node1", 0, 42), sample("node1", 1, 43), sample("node2", 0, *range(100, 120))], 1.0)
    watched = watched_processes(42, "node1", history)
    assert watched[:2] == [Watched("node1", 42, f"{LOG_ORIGIN}; holds device 0", True),
                           Watched("node1", 43, "holds device 1", True)]
    assert len(watched) == MAX_WATCHED and all(w.host == "node2" for w in watched[2:])
    assert watched_processes(None, "node1", AcceleratorHistory()) == []



def ddp_process_readings() -> list[tuple[float, list[tuple[int, int, str, int, str]]]]:
    """Each /proc reading of nccl_rank1_hang_readings.txt (recorded on 2×H200 as a summary:
    ``pid 781 rank=0 state=R utime+stime=2330 wchan=0``): its second of the day and per process
    (pid, rank or -1, state, CPU ticks, wchan)."""
    found = []
    for block in (DDP / "nccl_rank1_hang_readings.txt").read_text().split("== ")[1:]:
        stamp, *lines = block.splitlines()
        hours, minutes, seconds = (int(part) for part in stamp.split(":"))
        rows = []
        for line in lines:
            if line.startswith("pid "):
                fields = dict(field.split("=", 1) for field in line.split()[2:])
                rows.append((int(line.split()[1]), int(fields["rank"] or -1), fields["state"],
                             int(fields["utime+stime"]), fields["wchan"]))
        found.append((hours * 3600.0 + minutes * 60 + seconds, rows))
    return found


def test_the_nccl_hang_says_the_waiting_rank_spins_and_the_rank_it_waits_for_sleeps():
    """rank 0 in the all-reduce at 100 % CPU (its GPU spinning), rank 1 asleep before it (its
    GPU idle): the devices and the processes tell the same story, each process named by the
    device whose process list gave its pid."""
    model = RunModel()
    scanner = LogScanner()
    model.apply(scanner.feed((DDP / "nccl_rank1_hang_still_hanging.log").read_bytes()) + scanner.finish(), now=T0)
    model.note_write(T0)
    gpus, procs = hang_readings(), ddp_process_readings()
    ranks = {pid: rank for pid, rank, *_ in procs[0][1] if rank >= 0}
    held = [(at, with_processes(samples, [AcceleratorProcess(pid, "python", 1654.0, device_index=rank)
                                          for pid, rank in ranks.items()])) for at, samples in gpus]
    history = history_of(held, T0 + 3000)
    first = procs[0][0]
    for at, rows in procs:
        for watched in watched_processes(None, "localhost", history):
            (_, _, state, ticks, wchan) = next(row for row in rows if row[0] == watched.pid)
            # the box's uptime is not in the recording: the stamp stands for it (no age is said of it)
            model.processes.add(ProcessReading(watched, T0 + 3000 + at - first, at, 100,
                                               ProcStat(watched.pid, "python", state, ticks, 1, 0),
                                               None if wchan == "0" else wchan))
    (stalled,) = [f for f in RuleEngine(load_rules()).evaluate(model, T0 + 3600, accelerators=history)
                  if f.rule == "stalled"]
    assert "localhost:0 busy with flat power and memory" in stalled.message
    assert "; processes: pid 781 (python) running (R), 92 % CPU over 11 s, up " in stalled.message
    assert "(holds device 0, on localhost); pid 782 (python) asleep (S, waiting in hrtimer_nanosleep: a timer: " \
           "a sleep or a back-off), 0 % CPU over 11 s" in stalled.message


def test_the_json_form_of_a_gone_process_has_no_name_wait_or_age():
    held = ProcessReadings()
    held.add(ProcessReading(Watched("node1", 42, LOG_ORIGIN), 100.0, 500.0, 100, None, None))
    (gone,) = process_activity(held, 0.0)
    assert gone.to_json() == {"host": "node1", "pid": 42, "origin": LOG_ORIGIN, "on_device": False, "comm": None,
                              "state": "gone", "wchan": None, "cpu_pct": None, "over_s": None, "age_s": None,
                              "words": gone.words()}
