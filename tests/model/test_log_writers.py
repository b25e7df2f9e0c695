"""Which of a log's writers are read: the trainer's ranks before its launcher, tee's feeders
instead of tee, wrappers only where nothing else writes, torch's helpers after the ranks, at
most the cap. The process trees are those real launches make (shown in each test)."""

from __future__ import annotations

from tui.model.log_writers import writer_processes
from tui.parsers.log_writers import LogWriterScan
from tui.parsers.proc_stat import ProcStat


def tree(*processes: tuple[int, int, str]) -> dict[int, ProcStat | None]:
    """(pid, ppid, comm) of each process, as the box's stat lines say them."""
    return {pid: ProcStat(pid, comm, "S", 0, 1, 0, ppid) for pid, ppid, comm in processes}


def chosen(scan: LogWriterScan, stats: dict[int, ProcStat | None], cap: int = 9) -> list[tuple[int, str]]:
    return [(one.pid, one.origin) for one in writer_processes(scan, stats, "box", cap)]


def test_torchrun_piped_into_tee_is_read_by_its_ranks_then_its_agent_not_the_shell_or_tee():
    # bash run.sh 2>&1 | tee log: bash(100) → torchrun agent(101, pt_elastic) → ranks 102, 103
    # (each with a DataLoader worker), all writing into tee's (99) pipe.
    stats = tree((1, 0, "tmux: server"), (98, 1, "bash"), (99, 98, "tee"), (100, 98, "bash"),
                 (101, 100, "pt_elastic"), (102, 101, "python3.11"), (103, 101, "python3.11"),
                 (104, 102, "pt_data_worker"), (105, 103, "pt_data_worker"))
    scan = LogWriterScan({99: (3,)}, {99: frozenset({100, 101, 102, 103, 104, 105})})
    through = "writes the log through tee (pid 99)"
    assert chosen(scan, stats) == [(102, through), (103, through), (101, through), (104, through),
                                   (105, through)]


def test_a_redirect_finds_the_writer_and_the_children_that_do_not_write():
    # python launcher(200) > log, its children's output sent elsewhere (Ray's workers' way).
    stats = tree((199, 1, "bash"), (200, 199, "python"), (201, 200, "ray::Worker"), (202, 201, "python"))
    scan = LogWriterScan({200: (1, 2)}, {})
    assert chosen(scan, stats) == [(202, "under pid 200, which writes the log"),
                                   (201, "under pid 200, which writes the log"), (200, "writes the log")]


def test_a_shell_holding_the_log_is_left_out_where_its_python_is_there_and_read_where_not():
    # { python train.py; } > log: the shell and python both hold it.
    stats = tree((300, 1, "sh"), (301, 300, "python3"))
    assert chosen(LogWriterScan({300: (1,), 301: (1,)}, {}), stats) == [(301, "writes the log")]
    # sh -c 'sleep 600; echo step' > log: only the shell and its sleep.
    stats = tree((400, 1, "sh"), (401, 400, "sleep"))
    assert chosen(LogWriterScan({400: (1,)}, {}), stats) == [(401, "under pid 400, which writes the log")]
    stats = tree((500, 1, "run.sh"))
    assert chosen(LogWriterScan({500: (1,)}, {}), stats) == [(500, "writes the log")]


def test_a_tee_with_nothing_feeding_it_that_the_account_can_read_is_itself_read():
    stats = tree((600, 1, "tee"))
    assert chosen(LogWriterScan({600: (3,)}, {}), stats) == [(600, "writes the log")]


def test_at_most_the_cap_the_deepest_first():
    stats = tree((700, 1, "tee"), (701, 1, "torchrun"), *((702 + n, 701, "python") for n in range(10)))
    scan = LogWriterScan({700: (3,)}, {700: frozenset(range(701, 712))})
    assert [pid for pid, _ in chosen(scan, stats, cap=9)] == list(range(702, 711))


def test_nothing_written_nothing_chosen():
    assert chosen(LogWriterScan({}, {}), tree((800, 1, "python"))) == []
