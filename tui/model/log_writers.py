"""Which of the processes that write a run's log are worth reading while it looks stuck.

A run whose log names no pid and whose devices list none (torchrun with gloo on a CPU box, a
plain ``python train.py | tee log``) is found by who writes its log
(:mod:`tui.parsers.log_writers`): a process with the log open for writing, or, where that
process is ``tee``, those writing into tee's pipe. Their children belong to the run too
(torchrun's ranks are its agent's children; a shell redirect's writer is the shell that
started the trainer). Of that family the launchers' launchers say least: a shell wrapper sits
in ``wait``, tee in ``pipe_read``; the deepest processes are the ranks. So the ranks come
first, deepest first, then torch's own helpers (DataLoader workers), and the wrappers only
where the family holds nothing else; at most ``cap`` of them.
"""

from __future__ import annotations

from collections.abc import Mapping

from tui.model.processes import Watched
from tui.parsers.log_writers import LogWriterScan
from tui.parsers.proc_stat import ProcStat

# The writer whose own input is the run's output: the usual ``… 2>&1 | tee grpo.log``.
TEE = "tee"
# Processes that only start or carry the trainer (their ``comm``): read only where the family
# holds nothing else. A script run by its shebang is named after the script (``run.sh``).
WRAPPERS = frozenset({"sh", "bash", "dash", "zsh", "fish", "tcsh", "csh", "ksh", "mksh", "ash", "busybox",
                      "env", "nohup", "timeout", "stdbuf", "time", "script", "setsid", "sudo", "su",
                      "unbuffer", "srun", TEE})
# torch's names for its helper processes (``torch.multiprocessing._set_thread_name``): DataLoader
# workers and the pin-memory thread's process. Read after the ranks.
HELPERS = frozenset({"pt_data_worker", "pt_data_pin"})
# Where a writer's pid came from, as a finding says it.
WRITES = "writes the log"


def writer_processes(scan: LogWriterScan, stats: Mapping[int, ProcStat | None], host: str,
                     cap: int) -> list[Watched]:
    """The processes of the run writing ``scan``'s log on ``host``, at most ``cap``, the ranks
    first (module docstring); ``stats`` the box's own processes as read with the scan."""
    roots: dict[int, str] = {}
    tees = {pid for pid in scan.writers if _comm(stats, pid) == TEE and scan.feeds.get(pid)}
    for pid in sorted(set(scan.writers) - tees):
        roots[pid] = WRITES
    for tee in sorted(tees):
        for pid in sorted(scan.feeds[tee]):
            roots.setdefault(pid, f"{WRITES} through tee (pid {tee})")
    family = dict(roots)
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        if stat is not None:
            children.setdefault(stat.ppid, []).append(pid)
    for root, origin in roots.items():
        below = list(children.get(root, ()))
        while below:
            pid = below.pop()
            if pid not in family:
                family[pid] = f"under pid {root}, which {origin}"
                below.extend(children.get(pid, ()))
    ranked = sorted(family, key=lambda pid: (_tier(stats, pid), -_depth(stats, pid), pid))
    chosen = [pid for pid in ranked if _tier(stats, pid) < 2] or ranked
    return [Watched(host, pid, family[pid]) for pid in chosen[:cap]]


def _comm(stats: Mapping[int, ProcStat | None], pid: int) -> str:
    stat = stats.get(pid)
    return stat.comm if stat is not None else ""


def _tier(stats: Mapping[int, ProcStat | None], pid: int) -> int:
    """0 a trainer's process, 1 one of torch's helpers, 2 a wrapper."""
    comm = _comm(stats, pid)
    if comm in WRAPPERS or comm.endswith(".sh"):
        return 2
    return 1 if comm in HELPERS else 0


def _depth(stats: Mapping[int, ProcStat | None], pid: int) -> int:
    """How many of ``pid``'s ancestors are among ``stats`` (the account's own processes)."""
    depth, seen = 0, {pid}
    while (stat := stats.get(pid)) is not None and stat.ppid in stats and stat.ppid not in seen:
        pid = stat.ppid
        seen.add(pid)
        depth += 1
    return depth
